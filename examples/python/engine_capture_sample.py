"""Stands in for an engine's own capture module (here: vLLM's routed-experts capture as it was
before PR #50874), written against the engine's APIs: torch tensors, the forward context and
the parallel groups. wrap_engine_capture.py runs it unchanged under r3fuzz by swapping those
module globals for fakes; with vLLM installed you would point it at vLLM's module instead.
"""

try:  # the real engine environment
    import torch
    from vllm.distributed import get_dp_group, get_tp_group
    from vllm.forward_context import get_forward_context
except ImportError:  # under wrap_engine_capture.py these are replaced before first use
    torch = None
    get_dp_group = get_tp_group = get_forward_context = None


class RoutedExpertsCapturer:
    def __init__(self, max_num_batched_tokens, num_layers, num_experts_per_tok):
        self._buffer = None
        if torch is not None:
            self._buffer = torch.zeros((max_num_batched_tokens, num_layers, num_experts_per_tok),
                                       dtype=torch.int32)

    def capture(self, layer_id, topk_ids):
        dp_metadata = get_forward_context().dp_metadata
        if dp_metadata is not None:
            # Naive dispatch: every DP rank's tokens, gathered in DP order.
            num_tokens_across_dp = dp_metadata.num_tokens_across_dp_cpu
            total = int(num_tokens_across_dp.sum())
            assert total == topk_ids.shape[0], f"assert total == n failed: {total} != {topk_ids.shape[0]}"
            dp_rank = get_dp_group().rank_in_group
            start = int(num_tokens_across_dp[:dp_rank].sum())
            topk_ids = topk_ids[start:start + int(num_tokens_across_dp[dp_rank])]
        n = topk_ids.shape[0]
        self._buffer[:n, layer_id, :] = topk_ids
