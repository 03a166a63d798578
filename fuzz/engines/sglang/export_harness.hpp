// The SGLang part of an exported pytest module, after its data (fuzz/export/pytest_writer.cpp,
// export.cpp): the values that name their tokens, the fakes of what SGLang's capture and
// _get_local_slice read, the capturer built as SGLang builds it, and the tests. Python, kept as
// one text so the generated file reads top to bottom; it names only the data constants.
//
// What it mirrors, at SGLang 30cb848 (python/sglang/srt/): RoutedExpertsCapturer.__init__
// (state_capturer/routed_experts.py) allocates the device cache [R, L, K + shared], the host
// cache and, with DeepEP, gather_buffer; capture() reads get_moe_a2a_backend().is_deepep() and
// get_parallel().attn_tp_size and calls attn_tp_all_gather_into_tensor; _get_local_slice reads
// is_dp_attention_enabled() and get_dp_local_slice_cpu (layers/dp_attention.py), which reads
// get_attention_dp_rank(); on_forward_end (state_capturer/base.py) stores the window at
// forward_batch.out_cache_loc; model_runner.py, forward, passes cuda_graph_batch.
#pragma once

#include <string_view>

namespace r3::sglang {

inline constexpr std::string_view kSglangHarness = R"PY(
import sys

# ---- values computable by construction ---------------------------------------------------------
# Every routing value names its row: value = BASE + ((kind * SPAN_A + a) * SPAN_R + index) * TOP_K + k,
# with a = the DP rank (the layer for a device-buffer row an earlier forward left) and index = the
# token (j >= NUM_TOKENS[a]: a padding row of the rank's batch) or the device-buffer row. Host-cache
# slots start negative: -((slot * LAYERS + layer) * TOP_K + k) - 1. So a wrong row says what it is,
# and no expert id (routed 0 .. EXPERTS - 1, shared EXPERTS .. BASE - 1) or fill value (-1, 0) a
# capturer can hold is ever a token's value.
KIND_CODES = {"untouched": 0, "token": 1, "sp_padding": 2, "placeholder": 3}
KIND_NAMES = {code: kind for kind, code in KIND_CODES.items()}
SPAN_A = max(DP, LAYERS)
# Fused shared-expert columns of the device buffer (num_fused_shared_experts): every tensor gets the
# ids EXPERTS, EXPERTS + 1, ... appended, as the fused router does; the window drops them ([:topk_size]).
WIDTH = TOP_K + SHARED_EXPERTS
VERSION = os.environ.get("R3FUZZ_SGLANG_VERSION") or "upstream"


def rows_of(kind, a, first, length):
    """`length` rows of one run, as int32 [length, TOP_K]: a placeholder run repeats its row."""
    if kind == "placeholder":
        index = torch.full((length,), first, dtype=torch.int64)
    else:
        index = torch.arange(first, first + length, dtype=torch.int64)
    base = BASE + ((KIND_CODES[kind] * SPAN_A + a) * SPAN_R + index) * TOP_K
    return (base[:, None] + torch.arange(TOP_K, dtype=torch.int64)[None, :]).to(torch.int32)


def with_shared(rows):
    shared = torch.arange(EXPERTS, EXPERTS + SHARED_EXPERTS, dtype=torch.int32)
    return torch.cat([rows, shared.expand(rows.shape[0], SHARED_EXPERTS)], dim=1)


def tensor(i):
    """Tensor i of TENSORS as int32 [rows, TOP_K + SHARED_EXPERTS]: what one rank's MoE layer hands capture()."""
    parts = [rows_of(*run) for run in TENSORS[i]]
    return with_shared(torch.cat(parts) if parts else torch.zeros((0, TOP_K), dtype=torch.int32))


def fresh_device_buffer(rows):
    """The device cache [rows, LAYERS, WIDTH] before the forward: each row holds its own earlier value."""
    row = torch.arange(rows, dtype=torch.int64)[:, None, None]
    layer = torch.arange(LAYERS, dtype=torch.int64)[None, :, None]
    k = torch.arange(TOP_K, dtype=torch.int64)[None, None, :]
    routed = (BASE + (layer * SPAN_R + row) * TOP_K + k).to(torch.int32)
    shared = torch.arange(EXPERTS, EXPERTS + SHARED_EXPERTS, dtype=torch.int32).expand(rows, LAYERS, SHARED_EXPERTS)
    return torch.cat([routed, shared], dim=2)


def fresh_host_cache(slots):
    """The host cache [slots, LAYERS, TOP_K] before the forward: every slot's own (negative) earlier value."""
    slot = torch.arange(slots, dtype=torch.int64)[:, None, None]
    layer = torch.arange(LAYERS, dtype=torch.int64)[None, :, None]
    k = torch.arange(TOP_K, dtype=torch.int64)[None, None, :]
    return (-((slot * LAYERS + layer) * TOP_K + k) - 1).to(torch.int32)


def describe(values):
    """A published row's content in r3fuzz's words: "token (1, 5)", "a stale device-buffer row 3"."""
    values = [int(v) for v in values]
    v = values[0]
    if v < 0:
        slot, rest = divmod(-v - 1, LAYERS * TOP_K)
        if rest % TOP_K == 0 and values == [v - j for j in range(len(values))]:
            return f"its stale value (nothing wrote KV slot {slot} in this forward)"
        return f"the values {values}"
    if all(EXPERTS <= x < BASE for x in values):
        return f"the fused shared expert's id{'s' if len(values) > 1 else ''} {values} (no token's value)"
    if v < BASE:
        return f"the values {values}"
    rest, k = divmod(v - BASE, TOP_K)
    rest, index = divmod(rest, SPAN_R)
    code, a = divmod(rest, SPAN_A)
    if k != 0 or code > 3 or values != [v + j for j in range(len(values))]:
        return f"the values {values}"
    kind = KIND_NAMES[code]
    if kind == "token":
        return f"token ({a}, {index})" if index < NUM_TOKENS[a] else f"padding row {index} of dp {a}"
    if kind == "untouched":
        return f"a stale device-buffer row (row {index}{'' if a == LAYER else f' of layer {a}'}, left by an earlier forward)"
    return f"{kind} row {index} of dp {a}"


# ---- SGLang's world, as capture() and _get_local_slice see it -----------------------------------
class Parallel:
    """get_parallel() (runtime_context.py): the sizes and ranks the capturer reads."""

    def __init__(self, dp, tp):
        self.dp_size, self.attn_tp_size, self.attn_tp_rank, self.attn_dp_rank = DP, TP, tp, dp


class Schedule:
    """get_schedule(): the server's scheduling arguments (per DP rank, as SGLang stores them)."""
    chunked_prefill_size = CHUNKED_PREFILL_SIZE
    max_running_requests = MAX_RUNNING_REQUESTS
    disable_overlap_schedule = True  # on_forward_end stores the window inline (no_copy_to_cpu=False)


class A2aBackend:
    """get_moe_a2a_backend() (layers/moe/utils.py): is_deepep(), is_none(), is_<name>() of --moe-a2a-backend."""

    def __getattr__(self, name):
        if name.startswith("is_"):
            return lambda: A2A == name[3:]
        raise AttributeError(name)


class AttnTpGather:
    """attn_tp_all_gather_into_tensor(output, input): fills output with the attn-TP group's slices in
    rank order (TENSORS[gathered]; the input itself with one rank), sizes checked as
    torch.distributed.all_gather_into_tensor checks them."""

    def __init__(self):
        self.gathered = -1

    def __call__(self, output, input_):
        if output.numel() != TP * input_.numel():
            raise RuntimeError(f"output tensor size must be equal to world_size times input tensor size (output "
                               f"{list(output.shape)}, input {list(input_.shape)}, world_size {TP})")
        output.copy_((input_ if self.gathered < 0 else tensor(self.gathered)).reshape(output.shape))


class CaptureLayout:
    """get_capture_layout(): not SGLang's; what the proposed fix reads about the call's rows (CALLS)."""

    def __init__(self, call, dp):
        self.dp_local_start = call["dp_local_start"][dp]
        self.dp_local_num_tokens = call["dp_local_num_tokens"][dp]
        self.batch_offset = call["batch_offset"][dp]


class ForwardBatch:
    """forward_batch_info.py, ForwardBatch at forward end: the fields the window reads. Real token j
    is stored at KV slot j + 1; padding rows go to slot 0, the reserved dummy slot."""

    def __init__(self, dp):
        self.forward_mode = FORWARD
        self.global_num_tokens_cpu = list(FORWARD_END["global_num_tokens_cpu"])
        real, slots = NUM_TOKENS[dp], FORWARD_END["out_cache_loc"][dp]
        self.out_cache_loc = torch.tensor(list(range(1, real + 1)) + [0] * (slots - real), dtype=torch.int64)


class DecodeRunner:
    """The decode CUDA-graph runner: `bs` exists only once a replay set it."""

    def __init__(self, dp):
        self.captured_req_width = FORWARD_END["captured_req_width"]
        if FORWARD_END["runner_bs"][dp] is not None:
            self.bs = FORWARD_END["runner_bs"][dp]


def cuda_graph_batch(runner):
    """model_runner.py, forward: cuda_graph_batch=getattr(self.decode_cuda_graph_runner, "bs", None) upstream;
    sglang-miles passes the replay's tokens, bs * captured_req_width (R3FUZZ_SGLANG_VERSION=miles)."""
    bs = getattr(runner, "bs", None)
    if VERSION == "miles":
        return bs * runner.captured_req_width if bs else None
    return bs


class EngineRaised(Exception):
    def __init__(self, where, error):
        super().__init__(f"{where} raised {type(error).__name__}: {error}")


@pytest.fixture(scope="module")
def engine():
    if SIZING not in SIZINGS:
        pytest.fail(f"R3FUZZ_SIZING={SIZING} is none of {', '.join(SIZINGS)}", pytrace=False)
    if VERSION not in ("upstream", "miles"):
        pytest.fail(f"R3FUZZ_SGLANG_VERSION={VERSION} is neither upstream nor miles", pytrace=False)
    return load_engine()


def engine_class(capturer_class, names):
    """The engine's own cache class beside its capturer (state_capturer/base.py: BaseDeviceCache)."""
    for klass in capturer_class.__mro__:
        for name in names:
            found = getattr(sys.modules.get(klass.__module__), name, None)
            if isinstance(found, type):
                return found
    pytest.fail(f"none of {', '.join(names)} is defined beside {ENGINE} or its base classes", pytrace=False)


def make_capturer(capturer_class, dp):
    """Rank `dp`'s capturer as SGLang builds it (RoutedExpertsCapturer.__init__), with the rows of
    SIZING: the device cache [R, LAYERS, TOP_K + shared], the host cache [KV slots, LAYERS, TOP_K],
    gather_buffer [rows, TOP_K + shared] where that sizing allocates one. capture, _get_local_slice
    and on_forward_end read only these."""
    rows, gather_rows = SIZINGS[SIZING]
    capturer = capturer_class.__new__(capturer_class)
    device_class = engine_class(capturer_class, ("BaseDeviceCache", "DeviceCache"))
    device = device_class.__new__(device_class)
    device.buffer, device.num_layers, device.topk_size, device.name = fresh_device_buffer(rows), LAYERS, WIDTH, "routed_experts"
    host_class = engine_class(capturer_class, ("BaseHostCache", "HostCache"))
    host = host_class.__new__(host_class)
    slots = FORWARD_END["out_cache_loc"][dp] + 1
    host.buffer, host.num_tokens, host.num_layers, host.topk_size, host.name = (
        fresh_host_cache(slots), slots, LAYERS, TOP_K, "routed_experts")
    capturer.device_cache, capturer.host_cache = device, host
    capturer.num_layers, capturer.topk_size, capturer.num_fused_shared_experts = LAYERS, TOP_K, SHARED_EXPERTS
    capturer.top_k = TOP_K  # r3fuzz's sample names topk_size so
    if gather_rows is not None:
        # torch.empty in SGLang; a fill value here, so a row read unwritten is never a token's value.
        capturer.gather_buffer = torch.full((gather_rows, WIDTH), -1, dtype=torch.int32)
    return capturer


def install_fakes(module, monkeypatch, dp, tp, gather, layout):
    """The names the capturer module looks up at call time, swapped for this rank's."""
    parallel, backend = Parallel(dp, tp), A2aBackend()
    for name, fake in (("get_parallel", lambda: parallel), ("get_schedule", lambda: Schedule),
                       ("get_moe_a2a_backend", lambda: backend), ("is_dp_attention_enabled", lambda: DP_ATTENTION),
                       ("attn_tp_all_gather_into_tensor", gather), ("get_capture_layout", lambda: layout[0])):
        monkeypatch.setattr(module, name, fake, raising=False)
    window = getattr(module, "get_dp_local_slice_cpu", None)
    if window is not None:  # it reads get_attention_dp_rank from its own module (layers/dp_attention.py)
        monkeypatch.setitem(window.__globals__, "get_attention_dp_rank", lambda: dp)


def run_rank(engine, monkeypatch, dp, tp):
    """Every capture call of the forward on rank (dp, tp), then the forward end: its host cache."""
    module, capturer_class = engine
    capturer = make_capturer(capturer_class, dp)
    gather, layout = AttnTpGather(), [None]
    install_fakes(module, monkeypatch, dp, tp, gather, layout)
    rank = dp * TP + tp
    for i, call in enumerate(CALLS):
        gather.gathered, layout[0] = call["tp_gather"][rank], CaptureLayout(call, dp)
        try:
            capturer.capture(LAYER, tensor(call["received"][rank]))
        except Exception as e:  # any exception: the capture rejected the step
            raise EngineRaised(f"capture (call {i + 1} of {len(CALLS)})", e) from None
    try:
        capturer.on_forward_end(ForwardBatch(dp), FORWARD_END["can_run_graph"], cuda_graph_batch(DecodeRunner(dp)))
    except Exception as e:
        raise EngineRaised("on_forward_end", e) from None
    return capturer.host_cache.buffer


def first_wrong_row(host, dp, tp):
    """The first published row (a real token's KV slot) that differs from the reference, or None."""
    wrong = []
    for dst_row, kind, a, first, length in EXPECTED[(dp, tp)]:
        want = rows_of(kind, a, first, length)
        for i in range(length):
            j = dst_row + i
            if not torch.equal(host[j + 1, LAYER], want[i]):
                wrong.append((j, host[j + 1, LAYER], want[i]))
    if not wrong:
        return None
    j, got, want = wrong[0]
    text = (f"published row {j} of dp {dp} tp {tp} (KV slot {j + 1}) holds {describe(got)}, expected {describe(want)}"
            f" ({len(wrong)} of {NUM_TOKENS[dp]} published row{'' if NUM_TOKENS[dp] == 1 else 's'} wrong)")
    if tp > 0:
        text += "; latent: only attn-TP rank 0's rows are published"
    return text


RANKS = [(d, t) for d in range(DP) for t in range(TP)]
RANK_IDS = [f"dp{d}-tp{t}" for d, t in RANKS]

if REJECTION is None:

    @pytest.mark.parametrize("dp,tp", RANKS, ids=RANK_IDS)
    def test_rank_publishes_its_tokens(engine, monkeypatch, dp, tp):
        try:
            failure = first_wrong_row(run_rank(engine, monkeypatch, dp, tp), dp, tp)
        except EngineRaised as e:
            failure = f"dp {dp} tp {tp}: {e}; the reference accepts this step"
        if failure:  # failed outside the except block, so the report is the one line
            pytest.fail(failure, pytrace=False)

else:

    def test_step_is_rejected(engine, monkeypatch):
        for d, t in RANKS:
            try:
                run_rank(engine, monkeypatch, d, t)
            except EngineRaised:
                return
        pytest.fail(f"every rank accepted a step the reference rejects: {REJECTION}", pytrace=False)
)PY";

}  // namespace r3::sglang
