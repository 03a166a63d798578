"""What the vllm-ascend samples share, from docs/ascend-contract.md: the comm types of section 2.1
(vllm_ascend.ascend_forward_context.MoECommType, whose names the exported test looks up) and the TP
all-gather of section 3's branch 5 into torch.tensor_split slots. The forward context's extra part
(_EXTRA_CTX) and torch.distributed are names each sample module holds and a test replaces."""
from enum import Enum

import torch

try:  # the plugin's environment
    from vllm_ascend.ascend_forward_context import MoECommType
except ImportError:
    class MoECommType(Enum):
        ALLGATHER = 0
        MC2 = 1
        ALLTOALL = 2
        FUSED_MC2 = 3


def tp_all_gather(dist, group, rows, gathered_rows, tp_size):
    """The TP group's all-gather of `rows` into `gathered_rows` rows cut by tensor_split (the first
    gathered_rows % tp_size parts one row longer): what every rank of the group receives."""
    out = torch.empty((gathered_rows, rows.shape[1]), dtype=rows.dtype)
    dist.all_gather(list(torch.tensor_split(out, tp_size, dim=0)), rows, group.device_group)
    return out
