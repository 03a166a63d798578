"""The pieces of SGLang's runtime its routed-experts capturer reads, faked from one r3fuzz
SGLang request (docs/adapter-protocol.md, "SGLang steps"): the parallel state, the schedule,
the a2a backend, the attn-TP all-gather, the forward batch and the decode CUDA-graph runner.
The same approach as fake_parallel_context.py for vLLM: every value comes from the request."""

import torch


class FakeParallel:
    """get_parallel(): the sizes and ranks the capturer reads."""

    def __init__(self, request):
        self.dp_size = request["dp_size"]
        self.attn_tp_size = request["attn_tp_size"]
        self.attn_tp_rank = request["attn_tp_rank"]
        self.attn_dp_rank = request["rank"]["dp"]


class FakeSchedule:
    """get_schedule(): the server's chunked prefill size, per DP rank as SGLang stores it."""

    def __init__(self, server_args):
        self.chunked_prefill_size = server_args["chunked_prefill_size"]


class FakeServerArgs:
    def __init__(self, server_args):
        self.__dict__.update(server_args)


class FakeA2aBackend:
    """get_moe_a2a_backend(): the --moe-a2a-backend the request names."""

    def __init__(self, name):
        self.name = name

    def is_deepep(self):
        return self.name == "deepep"

    def is_none(self):
        return self.name == "none"


class FakeAttnTpGather:
    """attn_tp_all_gather_into_tensor(output, input): fills output with what r3fuzz says the
    attn-TP group's slices are (set per call in `gathered`), checking the sizes as
    torch.distributed.all_gather_into_tensor does."""

    def __init__(self, world_size, widen):
        self._world_size = world_size
        self._widen = widen
        self.gathered = None

    def __call__(self, output, tensor):
        if self.gathered is None:
            raise RuntimeError("attn_tp_all_gather_into_tensor: the request has no attn_tp_all_gather for this call")
        if output.numel() != self._world_size * tensor.numel():
            raise RuntimeError(f"output tensor size must be equal to world_size times input tensor size "
                               f"(output {list(output.shape)}, input {list(tensor.shape)}, world_size {self._world_size})")
        output.copy_(self._widen(self.gathered).reshape(output.shape))


class FakeCaptureLayout:
    """get_capture_layout() (the fix only): where this call's rows of this rank are."""

    def __init__(self, call):
        self.dp_local_start = call["dp_local_start"]
        self.dp_local_num_tokens = call["dp_local_num_tokens"]
        self.batch_offset = call["batch_offset"]


class FakeForwardBatch:
    """The forward batch at forward end: global_num_tokens_cpu and out_cache_loc. Real token j
    is stored at KV slot j + 1; padding rows go to slot 0, the reserved dummy slot."""

    def __init__(self, forward_batch):
        self.forward_mode = forward_batch["forward_mode"]
        self.global_num_tokens_cpu = forward_batch["global_num_tokens_cpu"]
        real, slots = forward_batch["real_tokens"], forward_batch["out_cache_loc"]
        self.out_cache_loc = torch.tensor(list(range(1, real + 1)) + [0] * (slots - real), dtype=torch.int64)


class FakeDecodeRunner:
    """The decode CUDA-graph runner: `bs` exists only once a replay set it."""

    def __init__(self, runner):
        self.captured_req_width = runner["captured_req_width"]
        if runner["bs"] is not None:
            self.bs = runner["bs"]
