"""What every sample capturer shares: the buffer and attributes vLLM's capturer holds after PR
#50874 (device_buffer [max_num_batched_tokens, layers, top_k] int32, dp_rank, tp_size), and the names
an engine's capture module looks up at call time. In the engine those come from vLLM; here they are
None until a test or adapter sets them on the sample module (each sample imports them, so each
module has its own names to replace)."""
import torch

try:  # the engine's environment
    from vllm.distributed.parallel_state import get_tp_group
    from vllm.forward_context import get_forward_context
except ImportError:
    get_tp_group = get_forward_context = None


def cdiv(a, b):
    return -(-a // b)


class SampleCapturer:
    def __init__(self, max_num_batched_tokens, num_layers, num_experts_per_tok, dp_rank=0, tp_size=1):
        self.device_buffer = torch.zeros((max_num_batched_tokens, num_layers, num_experts_per_tok), dtype=torch.int32)
        self.dp_rank = dp_rank
        self.tp_size = tp_size
