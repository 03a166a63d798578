"""vLLM's routed-experts capture() before PR #50874, written from docs/layout-contract.md section 7:
with DP metadata it asserts the tensor holds sum(num_tokens_across_dp) rows (the naive gathered
layout) and copies this rank's span. Padded SP shards trip the assertion (docs/FINDINGS.md #2)."""
from sample_engines._base import SampleCapturer, get_forward_context  # replaced by the test


class RoutedExpertsCapturer(SampleCapturer):
    def capture(self, layer_id, topk_ids):
        n = topk_ids.shape[0]
        meta = get_forward_context().dp_metadata
        if meta is None:
            start, n_d = 0, n
        else:
            across = meta.num_tokens_across_dp_cpu
            total = int(across.sum())
            assert self.dp_rank < len(across) and total == n, (
                f"assert total == n failed: routed experts have {n} rows, num_tokens_across_dp sums to {total}")
            n_d = int(across[self.dp_rank])
            start = int(across[:self.dp_rank].sum())
        if layer_id >= self.device_buffer.shape[1]:
            raise IndexError(f"layer {layer_id} out of range for a capture buffer of "
                             f"{self.device_buffer.shape[1]} layers")
        self.device_buffer[:n_d, layer_id, :] = topk_ids[start:start + n_d]
