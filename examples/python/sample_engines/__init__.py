"""Capture code written by r3fuzz from its contracts (docs/layout-contract.md,
docs/ascend-contract.md), never copied from an engine: stand-ins for an engine's routed-experts
capturer, so the exported pytests (`r3fuzz export CASE --pytest`) and the torch adapter can be
tested here without the engine.

    vllm_pre_50874  vLLM's capture() before PR #50874: the naive gathered layout only
    vllm_50874      vLLM's capture() after PR #50874, with its bugs (section 9: every call writes
                    from buffer row 0, so micro-batches and DP chunks overwrite each other; corner
                    case 2: a one-row SP shard skips the TP all-gather)
    r3_fixed        the fix r3fuzz proposes (r3-fixed): each call writes at its row offset in the step
    ascend          vllm-ascend's patched capture() at main 182b75ea, from docs/ascend-contract.md
                    section 3: six branches by which count the tensor's length equals (A1 to A5)
    ascend_fixed    the fix r3fuzz proposes for it (ascend-fixed): rows placed by the comm type, SP
                    and the rank's own count; the TP all-gather wherever the comm type split the rows

Each reads what vLLM's capturer reads: its attributes device_buffer, dp_rank and tp_size, and the
module names torch, get_forward_context and get_tp_group, which a test or adapter replaces; the
vllm-ascend samples also dist (torch.distributed) and _EXTRA_CTX (the step's comm type).
"""
