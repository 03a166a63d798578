#!/usr/bin/env python3
"""An r3fuzz adapter (protocol "r3fuzz-adapter/1") for vLLM's routed-experts capture after PR #50874.

Plain Python 3, standard library only. r3fuzz starts it once:

    r3fuzz run --impl 'external:python3 examples/python/vllm_50874_adapter.py' --mode concrete

Its hello asks for the batched exchange: r3fuzz sends one JSON line per case on stdin, holding
the requests of every capture call and every (dp, tp) rank in order, and this script answers
one JSON line holding the replies in the same order (docs/adapter-protocol.md). With
--no-batch it speaks the unbatched exchange instead: one line per capture call per rank, one
reply line for each. Both run the same handle() per request.

Its replies say what each capture() assigned as source ranges ("copies": rows [a, b) of the
routing tensor, or of the TP all-gather, went to buffer rows [0, b - a)), which is all a slice
assignment is; with --rows they list every row's values instead (the larger "rows" reply). The capture
below is written the way vLLM's capture() is: it reads the DP metadata of the forward
context, picks the rows of this DP rank from the routing tensor it was handed, and assigns
them to capture_buffer[:n_d, layer]. Only the forward context, the TP group and the buffer
are stand-ins, filled from the request.
"""
import json
import sys

PROTOCOL = "r3fuzz-adapter/1"


def cdiv(a, b):
    return -(-a // b)


class DPMetadata:
    def __init__(self, num_tokens_across_dp, local_sizes):
        self.num_tokens_across_dp_cpu = num_tokens_across_dp
        self.local_sizes = local_sizes


class ForwardContext:
    def __init__(self, dp_metadata):
        self.dp_metadata = dp_metadata


_forward_context = None


def get_forward_context():
    return _forward_context


class Rows:
    """A routing tensor [n, K], or a slice of one, that knows where its rows come from, as a torch
    view does: slicing copies nothing. The buffer can then record an assignment as the source
    range it copies (a "copies" reply) rather than as every value (a "rows" reply)."""

    def __init__(self, values, from_tp_gather=False, start=0, stop=None):
        self.values = values
        self.from_tp_gather = from_tp_gather
        self.start = start
        self.stop = len(values) if stop is None else stop

    def __len__(self):
        return self.stop - self.start

    def __getitem__(self, index):  # slices with step 1, all the capture takes
        lo, hi, _ = index.indices(len(self))
        return Rows(self.values, self.from_tp_gather, self.start + lo, self.start + max(lo, hi))

    def __iter__(self):
        return iter(self.values[self.start:self.stop])


class TPGroup:
    """The TP group of this rank: all_gather returns what the harness says the group holds."""

    def __init__(self, world_size, gathered):
        self.world_size = world_size
        self._gathered = gathered
        self.used = False

    def all_gather(self, tensor):
        self.used = True
        return Rows(self._gathered, from_tp_gather=True)


class RecordingBuffer:
    """capture_buffer[M, L, K]; remembers what is assigned at a layer, in order: the source
    ranges (copies), or with as_rows every row's values."""

    def __init__(self, rows, layers, top_k, as_rows=False):
        self.shape = (rows, layers, top_k)
        self.as_rows = as_rows
        self.writes = []

    def assign(self, row_start, layer, rows):
        # Like the C++ model, a short slice writes the rows it holds (torch would raise on the
        # shape mismatch; the reference rejects those cases either way).
        if self.as_rows:
            for i, values in enumerate(rows):
                self.writes.append({"dst_row": row_start + i, "values": values})
        else:
            self.writes.append({"dst_row": row_start, "src_row": rows.start, "rows": len(rows),
                                "from_tp_gather": rows.from_tp_gather})


class RoutedExpertsCapturer:
    def __init__(self, buffer, dp_rank, tp_group):
        self._buffer = buffer
        self._dp_rank = dp_rank
        self._tp_group = tp_group
        self.branch = None

    def capture(self, layer_id, topk_ids):
        dp_metadata = get_forward_context().dp_metadata
        n = len(topk_ids)
        if dp_metadata is None:
            self.branch = "single"
            n_d, rows = n, topk_ids
        else:
            across = dp_metadata.num_tokens_across_dp_cpu
            dp_rank = self._dp_rank
            if dp_rank >= len(across):
                raise IndexError(f"num_tokens_across_dp has {len(across)} entries, no entry for dp_rank {dp_rank}")
            total = sum(across)
            n_d = across[dp_rank]
            local_sizes = dp_metadata.local_sizes
            tp_size = self._tp_group.world_size
            if n == total:
                # Naive dispatch: the gathered batch in DP order.
                self.branch = "naive_total"
                start = sum(across[:dp_rank])
                rows = topk_ids[start:start + n_d]
            elif n == n_d:
                # Modular kernel: only this rank's tokens.
                self.branch = "local"
                rows = topk_ids[:n_d]
            elif local_sizes is not None and n == sum(local_sizes):
                # Gathered SP shards: rank r = d * spr + t contributed local_sizes[r] rows.
                if len(local_sizes) % len(across) != 0:
                    raise AssertionError(f"len(local_sizes) = {len(local_sizes)} is not a multiple of "
                                         f"dp_size {len(across)}")
                self.branch = "gathered_shards"
                shards_per_rank = len(local_sizes) // len(across)
                start = sum(local_sizes[:dp_rank * shards_per_rank])
                rows = topk_ids[start:start + n_d]
            elif tp_size > 1 and n != n_d and n == cdiv(n_d, tp_size):
                # This TP rank's SP shard: gather the shards, drop the tail padding.
                self.branch = "sp_allgather"
                rows = self._tp_group.all_gather(topk_ids)[:n_d]
            else:
                expected = f"{total} (all DP ranks), {n_d} (this DP rank)"
                if local_sizes is not None:
                    expected += f", {sum(local_sizes)} (sum of local_sizes)"
                if tp_size > 1:
                    expected += f" or {cdiv(n_d, tp_size)} (one SP shard)"
                raise AssertionError(f"routed experts have {n} rows; expected {expected}")
        rows_cap, layers, _ = self._buffer.shape
        if layer_id >= layers:
            raise IndexError(f"layer {layer_id} out of range for a capture buffer of {layers} layers")
        if n_d > rows_cap:
            raise IndexError(f"capture buffer holds {rows_cap} rows, {n_d} to write")
        self._buffer.assign(0, layer_id, rows)


def handle(request, as_rows=False):
    global _forward_context
    meta = request["dp_metadata"]
    _forward_context = ForwardContext(None if meta is None else DPMetadata(meta["num_tokens_across_dp"],
                                                                           meta["local_sizes"]))
    buffer = RecordingBuffer(*request["capture_buffer"], as_rows=as_rows)
    tp_group = TPGroup(request["tp_size"], request.get("tp_all_gather"))
    capturer = RoutedExpertsCapturer(buffer, request["rank"]["dp"], tp_group)
    reply = {"id": request["id"]}
    try:
        capturer.capture(request["layer"], Rows(request["topk_ids"]))
    except (AssertionError, IndexError) as e:
        reply["error"] = str(e)
        return reply
    reply["branch"] = capturer.branch
    reply["rows" if as_rows else "copies"] = buffer.writes
    reply["tp_all_gather"] = tp_group.used
    return reply


def hello(batch):
    reply = {"type": "hello", "protocol": PROTOCOL, "name": "vllm-50874 (python)", "version": "1",
             "replay_rows": "dispatch_group"}
    if batch:
        reply["batch"] = True
    return reply


def unpack(batch):
    """The requests of a batch as the unbatched exchange sends them: a batch carries the case and
    each distinct row tensor once, and its requests name the tensors by index."""
    tensors = batch["tensors"]
    for request in batch["requests"]:
        request["case"] = batch["case"]
        request["topk_ids"] = tensors[request["topk_ids"]]
        if "tp_all_gather" in request:
            request["tp_all_gather"] = tensors[request["tp_all_gather"]]
        yield request


def answer(request, batch, as_rows=False):
    if request.get("type") == "hello":
        return hello(batch)
    if request.get("type") == "batch":
        return {"replies": [handle(r, as_rows) for r in unpack(request)]}
    return handle(request, as_rows)


def main():
    options = sys.argv[1:]
    unknown = [a for a in options if a not in ("--no-batch", "--rows")]
    if unknown:
        sys.exit(f"usage: vllm_50874_adapter.py [--no-batch] [--rows] (unknown argument {unknown[0]!r})")
    batch, as_rows = "--no-batch" not in options, "--rows" in options
    for line in sys.stdin:
        reply = answer(json.loads(line), batch, as_rows)
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
