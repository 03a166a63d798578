#!/usr/bin/env python3
"""Runs an engine's capture method unchanged on real torch tensors under r3fuzz (adapter protocol
"r3fuzz-adapter/1", batched exchange; --no-batch for one request per rank).

    r3fuzz run --impl 'external:python3 examples/python/torch_capture_adapter.py --engine MODULE:CLASS' --mode concrete
    torch_capture_adapter.py --engine MODULE:CLASS [--buffer-attr NAME]
                             [--replay-rows max_num_tokens|dp_group|dispatch_group] [--no-batch]

Needs torch (the CPU build is enough); without it, it says so and exits 2. Unlike
wrap_engine_capture.py, which hands the engine list-backed stand-ins, everything the capture
method computes with is torch:

  topk_ids               -> torch.int32 tensor [n, K] of the rows this rank receives
  the capture buffer     -> a real torch.int32 tensor [M, L, K] on the CPU, set as the capturer's
                            attribute --buffer-attr (default _buffer) and filled with -1, a value
                            no routing id takes (bit 31 is never set)
  get_forward_context()  -> a context whose dp_metadata has num_tokens_across_dp_cpu (a torch
                            int32 tensor) and local_sizes exactly as the request gives them
  get_dp_group()         -> rank_in_group = the request's DP rank, world_size = dp_size
  get_tp_group(), tensor_model_parallel_all_gather()
                         -> all_gather returns the request's tp_all_gather as a torch tensor
                            (and records that the rank issued it)

After capture(layer, topk_ids) returns, the reply holds the rows of buffer[:, layer, :] that
changed, in row order; an exception the capture raises (AssertionError, IndexError,
RuntimeError, ValueError: torch raises these for shape mismatches and out-of-range writes) is the
reply's error. The module's own names are swapped before each call (FAKES below), so the
engine's code runs as it is.

Pointing it at vLLM's capturer (vllm/model_executor/layers/fused_moe/routed_experts_capturer.py,
with vLLM installed in the same Python):

    --engine vllm.model_executor.layers.fused_moe.routed_experts_capturer:RoutedExpertsCapturer \\
    --buffer-attr device_buffer --replay-rows dispatch_group --no-init

vLLM builds that capturer from a VllmConfig and a KVCacheConfig, not from (M, L, K): with
--no-init (or when CLASS(M, L, K) raises TypeError) the capturer is made without running
__init__, and the buffer attribute, dp_rank and tp_size are set, which is all capture() reads
besides the fakes (before PR #50874 the buffer was _device_buffer). If the
engine's capture reads other attributes, set them in make_capturer(). The default engine,
engine_capture_sample:RoutedExpertsCapturer, stands in for vLLM before PR #50874.

The project's sample engines (sample_engines/, written from docs/layout-contract.md) run the same way:

    --engine sample_engines.vllm_50874:RoutedExpertsCapturer --buffer-attr device_buffer --replay-rows dispatch_group
    --engine sample_engines.r3_fixed:RoutedExpertsCapturer --buffer-attr device_buffer --replay-rows dispatch_group

The forward context also carries capture_row_offset and capture_chunk_size (the request's call
row_offset and chunk_size), which vLLM's capture() never reads and a fixed capture needs.

vllm-ascend (--engines ascend): the plugin replaces vLLM's capture() with its own
(vllm_ascend/patch/worker/patch_routed_experts_capture.py), which also reads the step's comm type
and gathers over the TP group with torch.distributed. For a request with "ascend" (docs/
adapter-protocol.md, "vllm-ascend steps") the module's _EXTRA_CTX becomes a context whose
moe_comm_type is the request's MoECommType member (and capture_num_tokens the rank's own count, for a
fixed capture), and its dist an all_gather that fills the TP group's tensor_split slots with the
request's tp_all_gather, raising when this rank's input does not fit its slot:

    --engines ascend --engine vllm_ascend.patch.worker.patch_routed_experts_capture:RoutedExpertsCapturer \
    --buffer-attr device_buffer --no-init
    --engines ascend --engine sample_engines.ascend:RoutedExpertsCapturer --buffer-attr device_buffer
"""
import argparse
import importlib
import json
import os
import sys

from fake_parallel_context import fake_context
from vllm_50874_adapter import unpack  # the batch's requests as the unbatched exchange sends them

PROTOCOL = "r3fuzz-adapter/1"
UNWRITTEN = -1  # what the buffer holds before capture(); no routing id has bit 31 set

try:
    import torch
except ImportError as e:  # reported by main(), so --help still works
    torch = None
    TORCH_ERROR = str(e)


def int32_rows(rows, top_k):
    """The request's rows as an int32 tensor [n, K] (shape [0, K] when there are none)."""
    return torch.tensor(rows, dtype=torch.int32).reshape(len(rows), top_k)


def torch_tensor_of(values, like):
    """A list as a torch int32 tensor: flat, or rows as wide as `like`'s."""
    if like is None:
        return torch.tensor(values, dtype=torch.int32)
    return int32_rows(values, like.shape[-1])


class FakeExtraContext:
    """vllm_ascend.ascend_forward_context._EXTRA_CTX as the patched capture reads it."""

    def __init__(self, comm, num_tokens):
        self.moe_comm_type = comm
        self.capture_num_tokens = num_tokens  # not the plugin's: the rank's own count, for a fixed capture


class FakeDistributed:
    """torch.distributed's all_gather(outputs, input, group) over the TP group: each output slot gets
    its part of what r3fuzz says the TP all-gather returns on this rank."""

    def __init__(self, tp_group):
        self._group = tp_group

    def all_gather(self, outputs, input_, group=None):
        g = self._group
        g.gathered = True
        if g._gathered is None:
            raise RuntimeError("all_gather on a group of one rank")
        sizes = [int(o.shape[0]) for o in outputs]
        if sizes[g.rank_in_group] != int(input_.shape[0]):
            raise RuntimeError(f"all_gather: TP rank {g.rank_in_group} sends {int(input_.shape[0])} rows into a slot "
                               f"of {sizes[g.rank_in_group]}")
        gathered = int32_rows(g._gathered, int(input_.shape[1]))
        if sum(sizes) != int(gathered.shape[0]):
            raise RuntimeError(f"all_gather: slots of {sum(sizes)} rows for {int(gathered.shape[0])} gathered rows")
        at = 0
        for o in outputs:
            o.copy_(gathered[at:at + o.shape[0]])
            at += o.shape[0]


def make_capturer(engine_class, buffer_attr, buffer, request, run_init=True):
    """The engine's capturer for one rank, holding `buffer` as its capture buffer. After PR #50874
    vLLM's capture() also reads self.dp_rank and self.tp_size (set from the parallel config)."""
    rows, layers, top_k = buffer.shape
    capturer = None
    if run_init:
        try:
            capturer = engine_class(rows, layers, top_k)
        except TypeError:  # built from a config elsewhere (vLLM): capture() needs only the buffer
            pass
    if capturer is None:
        capturer = engine_class.__new__(engine_class)
    setattr(capturer, buffer_attr, buffer)
    capturer.dp_rank = request["rank"]["dp"]
    capturer.tp_size = request["tp_size"]
    return capturer


def handle(module, engine_class, buffer_attr, request, run_init=True):
    rows, layers, top_k = request["capture_buffer"]
    context, dp_group, tp_group = fake_context(request, torch_tensor_of)
    # FAKES: the names the engine module looks up at call time, swapped for this request.
    module.get_forward_context = lambda: context
    module.get_dp_group = lambda: dp_group
    module.get_tp_group = lambda: tp_group
    module.tensor_model_parallel_all_gather = lambda tensor, dim=0: tp_group.all_gather(tensor, dim)
    ascend = request.get("ascend")
    if ascend is not None:  # vllm-ascend's patched capture reads these too
        comm = getattr(module.MoECommType, ascend["moe_comm_type"])
        module._EXTRA_CTX = FakeExtraContext(comm, ascend["num_tokens"])
        tp_group.device_group = tp_group
        module.dist = FakeDistributed(tp_group)
    buffer = torch.full((rows, layers, top_k), UNWRITTEN, dtype=torch.int32)
    capturer = make_capturer(engine_class, buffer_attr, buffer, request, run_init)
    layer = request["layer"]
    reply = {"id": request["id"]}
    try:
        capturer.capture(layer, int32_rows(request["topk_ids"], top_k))
    except (AssertionError, IndexError, RuntimeError, ValueError) as e:
        reply["error"] = f"{type(e).__name__}: {e}"
        return reply
    # The rows that changed at this layer (a layer out of range raised above, as torch does).
    plane = buffer[:, layer, :]
    changed = (plane != UNWRITTEN).any(dim=1).nonzero().flatten().tolist()
    reply["rows"] = [{"dst_row": r, "values": plane[r].tolist()} for r in changed]
    reply["tp_all_gather"] = tp_group.gathered
    return reply


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="engine_capture_sample:RoutedExpertsCapturer",
                        help="MODULE:CLASS of the capturer whose capture(layer_id, topk_ids) runs")
    parser.add_argument("--buffer-attr", default="_buffer", help="the capturer attribute capture() writes into")
    parser.add_argument("--replay-rows", default="max_num_tokens",
                        choices=["max_num_tokens", "dp_group", "dispatch_group"])
    parser.add_argument("--no-batch", action="store_true", help="one request per call per rank, not per case")
    parser.add_argument("--engines", default="vllm",
                        help="the engines whose steps it answers, comma-separated: vllm (the default), ascend")
    parser.add_argument("--no-init", action="store_true",
                        help="make the capturer without running __init__ (vLLM's takes a VllmConfig and a KVCacheConfig)")
    args = parser.parse_args()
    if torch is None:
        print(f"torch_capture_adapter.py: torch is missing ({TORCH_ERROR}); install torch to run engine "
              f"capture code on real tensors, or use wrap_engine_capture.py", file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    module_name, _, class_name = args.engine.partition(":")
    if not module_name or not class_name:
        parser.error(f"--engine needs MODULE:CLASS, got {args.engine!r}")
    module = importlib.import_module(module_name)
    engine_class = getattr(module, class_name)
    for line in sys.stdin:
        request = json.loads(line)
        kind = request.get("type")
        if kind == "hello":
            reply = {"type": "hello", "protocol": PROTOCOL, "name": f"torch {args.engine}", "version": "1",
                     "replay_rows": args.replay_rows}
            if not args.no_batch:
                reply["batch"] = True
            if args.engines != "vllm":
                reply["engines"] = args.engines.split(",")
        elif kind == "batch":
            reply = {"replies": [handle(module, engine_class, args.buffer_attr, r, not args.no_init)
                                 for r in unpack(request)]}
        else:
            reply = handle(module, engine_class, args.buffer_attr, request, not args.no_init)
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
