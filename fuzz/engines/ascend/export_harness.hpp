// The vllm-ascend part of an exported pytest module, after vLLM's harness (fuzz/engines/vllm/
// export_harness.hpp, whose values, fakes and tests it reuses: an Ascend step is a vLLM-family
// step): the two more things the patched capture reads, the forward context's comm type
// (_EXTRA_CTX.moe_comm_type) and torch.distributed's all_gather into tensor_split slots over the TP
// group's device group, and run_rank redefined to install them. Python resolves run_rank when a
// test runs, so the redefinition below serves the tests vLLM's harness defines.
#pragma once

#include <string_view>

namespace r3::ascend {

inline constexpr std::string_view kAscendHarness = R"PY(

# ---- vllm-ascend's world: the comm type and torch.distributed's all_gather ----------------------
class ExtraContext:
    """vllm_ascend.ascend_forward_context._EXTRA_CTX: the step's comm type, which capture's branch 5 reads."""

    def __init__(self, comm, num_tokens):
        self.moe_comm_type = comm
        # Not read by the plugin's capture: the rank's own token count, which a fixed capture needs
        # with DP = 1 (no dp_metadata carries it there); in the plugin the model runner knows it.
        self.capture_num_tokens = num_tokens


class Dist:
    """torch.distributed as the patched capture calls it: all_gather(outputs, input, group) fills each
    slot with its part of what the TP all-gather returns on this rank. An input that does not fit this
    rank's slot raises, as r3fuzz's model does (whether HCCL raises, hangs or truncates is open)."""

    def __init__(self, group):
        self._group = group

    def all_gather(self, outputs, input_, group=None):
        g = self._group
        g.gathers += 1
        if g._gathered is None:
            raise RuntimeError("all_gather on a group of one rank")
        sizes = [int(o.shape[0]) for o in outputs]
        if sizes[g.rank_in_group] != int(input_.shape[0]):
            raise RuntimeError(f"all_gather: TP rank {g.rank_in_group} sends {int(input_.shape[0])} rows into a slot "
                               f"of {sizes[g.rank_in_group]}")
        gathered = tensor(g._gathered)
        if sum(sizes) != int(gathered.shape[0]):
            raise RuntimeError(f"all_gather: slots of {sum(sizes)} rows for {int(gathered.shape[0])} gathered rows")
        at = 0
        for o in outputs:
            o.copy_(gathered[at:at + o.shape[0]])
            at += o.shape[0]


def run_rank(engine, monkeypatch, dp, tp, rows):
    """Every capture call of the step on rank (dp, tp), in order: its buffer and its TP all-gathers per call."""
    module, capturer_class = engine
    buffer = fresh_buffer(rows)
    capturer = make_capturer(capturer_class, dp, buffer)
    rank = dp * TP + tp
    gathers = []
    for i, call in enumerate(CALLS):
        context = ForwardContext(call)
        gathered = call["tp_gather"][rank]
        tp_group = Group(tp, TP, None if gathered < 0 else gathered)
        tp_group.device_group = tp_group
        # The names the patch module looks up at call time (vllm.forward_context, vllm.distributed,
        # torch.distributed, vllm_ascend.ascend_forward_context).
        monkeypatch.setattr(module, "get_forward_context", lambda: context, raising=False)
        monkeypatch.setattr(module, "get_tp_group", lambda: tp_group, raising=False)
        monkeypatch.setattr(module, "dist", Dist(tp_group), raising=False)
        extra = ExtraContext(getattr(module.MoECommType, COMM), NUM_TOKENS[dp])
        monkeypatch.setattr(module, "_EXTRA_CTX", extra, raising=False)
        try:
            capturer.capture(LAYER, tensor(call["received"][rank]))
        except Exception as e:  # any exception: the capture rejected the step
            raise CaptureRaised(i, e) from None
        gathers.append(tp_group.gathers)
    return buffer, gathers
)PY";

}  // namespace r3::ascend
