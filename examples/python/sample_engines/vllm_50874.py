"""vLLM's routed-experts capture() after PR #50874, written from docs/layout-contract.md section 7:
the branches in their order, then capture_buffer[0:n_d, layer] = the chosen rows. Its bugs are
kept on purpose: every call writes from row 0 (section 9: the second micro-batch overwrites the
first; a DP chunk lands at row 0), and a one-row SP shard takes branch 3 (corner case 2)."""
from sample_engines._base import SampleCapturer, cdiv, get_forward_context, get_tp_group  # the last two replaced by the test


class RoutedExpertsCapturer(SampleCapturer):
    def capture(self, layer_id, topk_ids):
        n_d, rows = self.rows_of_this_rank(topk_ids)
        if layer_id >= self.device_buffer.shape[1]:
            raise IndexError(f"layer {layer_id} out of range for a capture buffer of "
                             f"{self.device_buffer.shape[1]} layers")
        self.device_buffer[:n_d, layer_id, :] = rows

    def rows_of_this_rank(self, topk_ids):
        """(n_d, the rows of this DP rank) by section 7's decision."""
        n = topk_ids.shape[0]
        meta = get_forward_context().dp_metadata
        if meta is None:  # 1. a single DP rank
            return n, topk_ids
        across = meta.num_tokens_across_dp_cpu
        if self.dp_rank >= len(across):
            raise IndexError(f"num_tokens_across_dp has {len(across)} entries, no entry for dp_rank {self.dp_rank}")
        n_d = int(across[self.dp_rank])
        total = int(across.sum())
        sizes = meta.local_sizes
        if n == total:  # 2. naive dispatch: every rank's tokens in DP order
            start = int(across[:self.dp_rank].sum())
            return n_d, topk_ids[start:start + n_d]
        if n == n_d:  # 3. the modular kernel: this rank's tokens only
            return n_d, topk_ids[:n_d]
        if sizes is not None and n == sum(sizes):  # 4. gathered SP shards, DP-major
            if len(sizes) % len(across) != 0:
                raise AssertionError(f"len(local_sizes) = {len(sizes)} is not a multiple of dp_size {len(across)}")
            per_rank = len(sizes) // len(across)
            start = sum(sizes[:self.dp_rank * per_rank])
            return n_d, topk_ids[start:start + n_d]
        if self.tp_size > 1 and n != n_d and n == cdiv(n_d, self.tp_size):  # 5. this TP rank's SP shard
            return n_d, get_tp_group().all_gather(topk_ids, dim=0)[:n_d]
        expected = f"{total} (all DP ranks), {n_d} (this DP rank)"
        if sizes is not None:
            expected += f", {sum(sizes)} (sum of local_sizes)"
        if self.tp_size > 1:
            expected += f" or {cdiv(n_d, self.tp_size)} (one SP shard)"
        raise AssertionError(f"routed experts have {n} rows; expected {expected}")
