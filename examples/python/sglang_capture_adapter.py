#!/usr/bin/env python3
"""Runs an SGLang-style routed-experts capturer unchanged on real torch tensors under r3fuzz
(adapter protocol "r3fuzz-adapter/1", SGLang steps: docs/adapter-protocol.md; batched, or
--no-batch for one request per rank).

    r3fuzz run --profile sglang --impl 'external:python3 examples/python/sglang_capture_adapter.py --version upstream'
    sglang_capture_adapter.py [--version upstream|miles|fixed] [--shared-experts N] [--no-batch]

For each rank of an SGLang forward it builds the capturer of sglang_capture_sample.py (the
engine's code), swaps the module's runtime getters for fakes built from the request (FAKES
below, fake_sglang_runtime.py), fills its device and host buffers with -1 (rows an earlier
forward left: no routing id is negative), calls capture(layer, topk_ids) for every capture call
in order (two under TBO), then the model runner's forward end with the forward batch
(global_num_tokens_cpu, out_cache_loc), can_run_graph and the decode runner (bs,
captured_req_width). The reply holds the buffer's rows R and the host-cache rows of the rank's
real tokens, in token order, or the exception the engine raised (torch raises RuntimeError and
IndexError for shapes, Python TypeError for dp_rank * None).

--shared-experts N gives the device buffer N fused shared-expert columns, appended to every
tensor as the fused router does (expert ids E, E+1, ...), which the window drops.
Needs torch; without it, it says so and exits 2.
"""
import argparse
import json
import os
import sys

PROTOCOL = "r3fuzz-adapter/1"
STALE = -1  # what the buffers hold before the forward; no routing id is negative

try:
    import torch
except ImportError as e:  # reported by main(), so --help still works
    torch = None
    TORCH_ERROR = str(e)


class Branch:
    """Records which window _get_local_slice took, by watching get_dp_local_slice_cpu: the engine's
    code runs as it is, and the branch names the finding's signature (policy.cpp's names)."""

    def __init__(self, window_of):
        self._window_of = window_of
        self.name, self.window = "window_local", None

    def __call__(self, forward_batch, can_run_graph, cuda_graph_batch):
        self.name = "window_graph" if can_run_graph else "window_prefix"
        start, n = self._window_of(forward_batch, can_run_graph, cuda_graph_batch)
        self.window = [start, n]
        return start, n


def widen(rows, top_k, shared, experts):
    """The request's rows as int32 [n, K + shared]: the fused shared experts' ids appended."""
    t = torch.tensor(rows, dtype=torch.int32).reshape(len(rows), top_k)
    extra = torch.arange(experts, experts + shared, dtype=torch.int32).expand(len(rows), shared)
    return torch.cat([t, extra], dim=1)


def handle(sample, fakes, request, version, shared):
    top_k, layer = request["top_k"], request["layer"]
    experts = request["case"]["model"]["experts"]
    args = request["server_args"]
    parallel, backend = fakes.FakeParallel(request), fakes.FakeA2aBackend(request["a2a"])
    gather = fakes.FakeAttnTpGather(request["attn_tp_size"], lambda rows: widen(rows, top_k, shared, experts))
    branch = Branch(SAMPLE_WINDOW)
    layout = [None]
    # FAKES: the names the engine module looks up at call time, swapped for this request.
    sample.get_parallel = lambda: parallel
    sample.get_schedule = lambda: fakes.FakeSchedule(args)
    sample.get_moe_a2a_backend = lambda: backend
    sample.is_dp_attention_enabled = lambda: request["dp_attention"]
    sample.get_attention_dp_rank = lambda: parallel.attn_dp_rank
    sample.attn_tp_all_gather_into_tensor = gather
    sample.get_capture_layout = lambda: layout[0]
    sample.get_dp_local_slice_cpu = branch
    forward_batch = fakes.FakeForwardBatch(request["forward_batch"])
    slots = forward_batch.out_cache_loc.shape[0] + 1
    reply = {"id": request["id"]}
    try:
        if version == "fixed":
            aligned = request["dp_attention"] or (request["a2a"] != "none" and request["attn_tp_size"] > 1)
            most = sample.largest_batch(fakes.FakeServerArgs(args), request["attn_tp_size"], aligned)
            capturer = sample.FixedRoutedExpertsCapturer(slots, args["max_running_requests"], request["num_layers"],
                                                         top_k, shared, largest_batch=most)
        else:
            capturer = sample.RoutedExpertsCapturer(slots, args["max_running_requests"], request["num_layers"],
                                                    top_k, shared)
        reply["buffer_rows"] = capturer.device_cache.buffer.shape[0]
        capturer.device_cache.buffer.fill_(STALE)
        capturer.host_cache.buffer.fill_(STALE)
        for call in request["calls"]:
            gather.gathered = call.get("attn_tp_all_gather")
            layout[0] = fakes.FakeCaptureLayout(call)
            capturer.capture(layer, widen(call["topk_ids"], top_k, shared, experts))
        runner = fakes.FakeDecodeRunner(request["decode_cuda_graph_runner"])
        sample.forward_end(capturer, forward_batch, request["can_run_graph"], runner, version)
    except (AssertionError, IndexError, RuntimeError, TypeError, ValueError) as e:
        reply["error"] = f"{type(e).__name__}: {e}"
        return reply
    real = request["forward_batch"]["real_tokens"]
    reply["rows"] = capturer.host_cache.buffer[1: real + 1, layer, :].tolist()
    reply["branch"] = "write_at_offset" if version == "fixed" else branch.name
    if branch.window is not None:
        reply["window"] = branch.window
    elif version != "fixed":
        reply["window"] = [0, forward_batch.out_cache_loc.shape[0]]
    return reply


def unpack(batch):
    """A batch's requests as the unbatched exchange sends them: each with the batch's case."""
    return [dict(request, case=batch["case"]) for request in batch["requests"]]


SAMPLE_WINDOW = None  # the sample's own get_dp_local_slice_cpu, wrapped by Branch


def main():
    global SAMPLE_WINDOW
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="upstream", choices=["upstream", "miles", "fixed"])
    parser.add_argument("--shared-experts", type=int, default=1, help="fused shared-expert columns of the device buffer")
    parser.add_argument("--no-batch", action="store_true", help="one request per rank, not per case")
    args = parser.parse_args()
    if torch is None:
        print(f"sglang_capture_adapter.py: torch is missing ({TORCH_ERROR}); install torch to run it",
              file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fake_sglang_runtime as fakes
    import sglang_capture_sample as sample
    SAMPLE_WINDOW = sample.get_dp_local_slice_cpu
    for line in sys.stdin:
        request = json.loads(line)
        kind = request.get("type")
        if kind == "hello":
            reply = {"type": "hello", "protocol": PROTOCOL, "name": f"sglang-{args.version} sample (torch)",
                     "version": "1", "engines": ["sglang"]}
            if not args.no_batch:
                reply["batch"] = True
        elif kind == "batch":
            reply = {"replies": [handle(sample, fakes, r, args.version, args.shared_experts) for r in unpack(request)]}
        else:
            reply = handle(sample, fakes, request, args.version, args.shared_experts)
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
