"""The pieces of vLLM's forward context and parallel groups an engine's capture() reads, faked
from one r3fuzz adapter request. Shared by wrap_engine_capture.py (plain lists) and
torch_capture_adapter.py (real torch tensors): each passes `tensor_of(values, like)`, which turns
a list of values into its kind of tensor (`like`: a tensor whose row width to use, or None)."""


class FakeDPMetadata:
    def __init__(self, meta, tensor_of):
        self.num_tokens_across_dp_cpu = tensor_of(meta["num_tokens_across_dp"], None)
        sizes = meta["local_sizes"]
        self.local_sizes = None if sizes is None else list(sizes)


class FakeForwardContext:
    def __init__(self, request, tensor_of):
        meta = request["dp_metadata"]
        self.dp_metadata = None if meta is None else FakeDPMetadata(meta, tensor_of)
        # Not vLLM's: where this call's rows start in the step, and the DP chunk size. vLLM's
        # capture() never reads them; a fixed capture (sample_engines/r3_fixed.py) needs them.
        call = request.get("call") or {}
        self.capture_row_offset = call.get("row_offset", 0)
        self.capture_chunk_size = call.get("chunk_size")


class FakeGroup:
    """A DP or TP group: its rank, its size, and the all-gather r3fuzz says it returns."""

    def __init__(self, rank, world_size, tensor_of, gathered=None):
        self.rank_in_group = rank
        self.world_size = world_size
        self._tensor_of = tensor_of
        self._gathered = gathered
        self.gathered = False

    def all_gather(self, tensor, dim=0):
        self.gathered = True
        return self._tensor_of(self._gathered, tensor)


def fake_context(request, tensor_of):
    """The forward context, the DP group and the TP group of the request's rank."""
    return (FakeForwardContext(request, tensor_of),
            FakeGroup(request["rank"]["dp"], request["dp_size"], tensor_of),
            FakeGroup(request["rank"]["tp"], request["tp_size"], tensor_of, request.get("tp_all_gather")))
