#!/usr/bin/env python3
"""Runs an engine's own capture code under r3fuzz (adapter protocol "r3fuzz-adapter/1").

Plain Python 3, standard library only. The engine's module is imported as it is; only what
it reaches for at run time is swapped for fakes built from each request:

  get_forward_context()  -> a context whose dp_metadata carries num_tokens_across_dp_cpu and
                            local_sizes exactly as the request gives them (None: no DP metadata)
  get_dp_group()         -> rank_in_group = the request's DP rank
  get_tp_group()         -> world_size = tp_size; all_gather() returns the request's tp_all_gather
  the capture buffer     -> a [M, L, K] buffer that records every row assigned to it
  topk_ids               -> the rows this rank receives, as a tensor-like object

    r3fuzz run --impl 'external:python3 examples/python/wrap_engine_capture.py' --mode concrete
    wrap_engine_capture.py [--engine MODULE:CLASS] [--replay-rows max_num_tokens|dp_group|dispatch_group]

The default engine is engine_capture_sample:RoutedExpertsCapturer (vLLM before #50874, whose
replay buffer held max_num_tokens rows). To wrap another engine, point --engine at its
capturer class and adjust make_capturer() and the names in FAKES to its API.
"""
import argparse
import importlib
import json
import os
import sys

from fake_parallel_context import fake_context

PROTOCOL = "r3fuzz-adapter/1"


class FakeTensor:
    """The slice of torch.Tensor a capture function uses: shape, slicing, indexing, sum()."""

    def __init__(self, rows):
        self.rows = rows

    @property
    def shape(self):
        if self.rows and isinstance(self.rows[0], list):
            return (len(self.rows), len(self.rows[0]))
        return (len(self.rows),)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return FakeTensor(self.rows[index])
        return self.rows[index]

    def sum(self):
        return sum(self.rows)

    def tolist(self):
        return list(self.rows)


class RecordingCaptureBuffer:
    """capture_buffer[M, L, K]: `buffer[rows, layer, :] = tensor` records the rows written.
    Raises like torch when the assigned tensor does not fit the selected rows."""

    def __init__(self, rows, layers, top_k):
        self.shape = (rows, layers, top_k)
        self.writes = []

    def __setitem__(self, index, value):
        rows, layer, _ = index
        if not isinstance(layer, int) or not 0 <= layer < self.shape[1]:
            raise IndexError(f"index {layer} is out of bounds for dimension 1 with size {self.shape[1]}")
        first, stop, step = rows.indices(self.shape[0])
        selected = range(first, stop, step)
        values = value.rows if isinstance(value, FakeTensor) else value
        if len(values) != len(selected):
            raise RuntimeError(f"The expanded size of the tensor ({len(selected)}) must match the existing "
                               f"size ({len(values)}) at non-singleton dimension 0")
        for row, v in zip(selected, values):
            self.writes.append({"dst_row": row, "values": list(v)})


def make_capturer(engine_class, request):
    """The engine's capturer for one rank, with the recording buffer in place of its own."""
    rows, layers, top_k = request["capture_buffer"]
    capturer = engine_class(rows, layers, top_k)
    buffer = RecordingCaptureBuffer(rows, layers, top_k)
    capturer._buffer = buffer
    return capturer, buffer


def handle(module, engine_class, request):
    context, dp_group, tp_group = fake_context(request, lambda values, like: FakeTensor(values))
    # The names the engine module looks up at call time (FAKES): swap them for this request.
    module.get_forward_context = lambda: context
    module.get_dp_group = lambda: dp_group
    module.get_tp_group = lambda: tp_group
    capturer, buffer = make_capturer(engine_class, request)
    reply = {"id": request["id"]}
    try:
        capturer.capture(request["layer"], FakeTensor(request["topk_ids"]))
    except (AssertionError, IndexError, RuntimeError) as e:
        reply["error"] = f"{type(e).__name__}: {e}"
        return reply
    # A black box does not name the branch it took; r3fuzz reports it as "unnamed".
    reply["rows"] = buffer.writes
    reply["tp_all_gather"] = tp_group.gathered
    return reply


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="engine_capture_sample:RoutedExpertsCapturer")
    parser.add_argument("--replay-rows", default="max_num_tokens",
                        choices=["max_num_tokens", "dp_group", "dispatch_group"])
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    module_name, class_name = args.engine.split(":")
    module = importlib.import_module(module_name)
    engine_class = getattr(module, class_name)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("type") == "hello":
            reply = {"type": "hello", "protocol": PROTOCOL, "name": f"wrapped {args.engine}", "version": "1",
                     "replay_rows": args.replay_rows}
        else:
            reply = handle(module, engine_class, request)
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
