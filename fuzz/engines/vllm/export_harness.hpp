// The vLLM part of an exported pytest module, after its data (fuzz/export/pytest_writer.cpp,
// export.cpp): the fakes of what vLLM's capture() reads, the capturer built as vLLM holds it, and
// the tests. Python, kept as one text so the generated file reads top to bottom; it names only the
// data constants.
#pragma once

#include <string_view>

namespace r3::vllm {

inline constexpr std::string_view kVllmHarness = R"PY(
# ---- values computable by construction ---------------------------------------------------------
# Every routing value names its row: value = BASE + ((kind * SPAN_A + a) * SPAN_R + index) * TOP_K + k,
# with a = the DP rank (the layer for an untouched buffer row) and index = the token, the padded
# row, or the buffer row. So a misplaced row says which token it is, and no expert id or fill value
# (-1, 0) a capturer can hold is ever an expected value.
KIND_CODES = {"untouched": 0, "token": 1, "sp_padding": 2, "placeholder": 3}
KIND_NAMES = {code: kind for kind, code in KIND_CODES.items()}
SPAN_A = max(DP, LAYERS)


def rows_of(kind, a, first, length):
    """`length` rows of one run, as int32 [length, TOP_K]: a placeholder run repeats its row."""
    if kind == "placeholder":
        index = torch.full((length,), first, dtype=torch.int64)
    else:
        index = torch.arange(first, first + length, dtype=torch.int64)
    base = BASE + ((KIND_CODES[kind] * SPAN_A + a) * SPAN_R + index) * TOP_K
    return (base[:, None] + torch.arange(TOP_K, dtype=torch.int64)[None, :]).to(torch.int32)


def tensor(i):
    """Tensor i of TENSORS: the rows one rank receives, or one TP all-gather."""
    parts = [rows_of(*run) for run in TENSORS[i]]
    return torch.cat(parts) if parts else torch.zeros((0, TOP_K), dtype=torch.int32)


def fresh_buffer(rows):
    """The capture buffer [rows, LAYERS, TOP_K] before the step: each row holds its own untouched value."""
    row = torch.arange(rows, dtype=torch.int64)[:, None, None]
    layer = torch.arange(LAYERS, dtype=torch.int64)[None, :, None]
    k = torch.arange(TOP_K, dtype=torch.int64)[None, None, :]
    return (BASE + (layer * SPAN_R + row) * TOP_K + k).to(torch.int32)


def expected_buffer(dp, tp, rows):
    """What the reference expects in rank (dp, tp)'s buffer after the step."""
    buffer = fresh_buffer(rows)
    for dst_row, kind, a, first, length in EXPECTED[(dp, tp)]:
        buffer[dst_row:dst_row + length, LAYER, :] = rows_of(kind, a, first, length)
    return buffer


def describe(values, row, layer):
    """A buffer row's content in r3fuzz's words: "token (1, 5)", "SP padding row 7 of dp 0"."""
    values = [int(v) for v in values]
    v = values[0]
    rest, k = divmod(v - BASE, TOP_K)
    rest, index = divmod(rest, SPAN_R)
    code, a = divmod(rest, SPAN_A)
    if v < BASE or k != 0 or code > 3 or values != [v + j for j in range(len(values))]:
        return f"the values {values}"
    kind = KIND_NAMES[code]
    if kind == "token":
        return f"token ({a}, {index})"
    if kind == "sp_padding":
        return f"SP padding row {index} of dp {a}"
    if kind == "placeholder":
        return f"the placeholder row of dp {a}"
    if (index, a) == (row, layer):
        return "its value from before the step"
    return f"the value buffer row {index} of layer {a} held before the step"


# ---- vLLM's world, as capture() sees it -------------------------------------------------------
class DPMetadata:
    """vllm.forward_context.DPMetadata: the fields capture() reads, as this call's forward context holds them."""

    def __init__(self, num_tokens_across_dp, local_sizes):
        self.num_tokens_across_dp_cpu = torch.tensor(num_tokens_across_dp, dtype=torch.int32)
        self.local_sizes = None if local_sizes is None else list(local_sizes)


class ForwardContext:
    def __init__(self, call):
        across = call["num_tokens_across_dp"]
        self.dp_metadata = None if across is None else DPMetadata(across, call["local_sizes"])
        # Not read by vLLM's capture(): where this call's rows start in the step (the micro-batch's
        # first token, the DP chunk's first row) and the DP chunk size. A fixed capture needs them;
        # in vLLM the micro-batch's token slice is known to UBatchWrapper.
        self.capture_row_offset = call["row_offset"]
        self.capture_chunk_size = call["chunk_size"]


class Group:
    """A GroupCoordinator: its rank, its size and, for the TP group, what all_gather returns on this rank."""

    def __init__(self, rank, world_size, gathered=None):
        self.rank_in_group = rank
        self.world_size = world_size
        self._gathered = gathered
        self.gathers = 0

    def all_gather(self, input_, dim=-1):
        self.gathers += 1
        if self._gathered is None:
            raise RuntimeError("all_gather on a group of one rank")
        if dim not in (0, -input_.dim()):
            raise ValueError(f"this test gathers along dim 0 (the token dim), capture asked for dim={dim}")
        return tensor(self._gathered)


class CaptureRaised(Exception):
    def __init__(self, call, error):
        super().__init__(f"capture raised {type(error).__name__}: {error} (call {call + 1} of {len(CALLS)})")


@pytest.fixture(scope="module")
def engine():
    if SIZING not in SIZINGS:
        pytest.fail(f"R3FUZZ_SIZING={SIZING} is none of {', '.join(SIZINGS)}", pytrace=False)
    return load_engine()


def make_capturer(capturer_class, dp, buffer):
    """The capturer of DP rank `dp` as vLLM holds it. vLLM builds it from a VllmConfig (the buffer
    [max_num_batched_tokens, layers, top_k] int32, dp_rank, tp_size); capture() reads only these."""
    capturer = capturer_class.__new__(capturer_class)
    capturer.device_buffer = buffer  # after PR #50874
    capturer._device_buffer = buffer  # before it
    capturer.dp_rank = dp
    capturer.tp_size = TP
    return capturer


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
        dp_group = Group(dp, DP)
        # The names the capture module looks up at call time (from vllm.forward_context and vllm.distributed).
        monkeypatch.setattr(module, "get_forward_context", lambda: context, raising=False)
        monkeypatch.setattr(module, "get_tp_group", lambda: tp_group, raising=False)
        for name, fake in (("get_dp_group", lambda: dp_group),
                           ("tensor_model_parallel_all_gather", lambda t, dim=-1: tp_group.all_gather(t, dim)),
                           ("get_tensor_model_parallel_rank", lambda: tp)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, fake)
        try:
            capturer.capture(LAYER, tensor(call["received"][rank]))
        except Exception as e:  # any exception: the capture rejected the step
            raise CaptureRaised(i, e) from None
        gathers.append(tp_group.gathers)
    return buffer, gathers


def first_difference(got, want, dp, tp):
    """The first buffer row that differs (the case's layer first), in the reference's words, or None."""
    differ = (got != want).any(dim=2).nonzero().tolist()
    if not differ:
        return None
    differ.sort(key=lambda p: (p[1] != LAYER, p[1], p[0]))
    row, layer = differ[0]
    where = f"buffer row {row} of dp {dp} tp {tp}" + ("" if layer == LAYER else f" at layer {layer}")
    text = (f"{where} holds {describe(got[row, layer], row, layer)}, expected {describe(want[row, layer], row, layer)}"
            f" ({len(differ)} buffer row{'' if len(differ) == 1 else 's'} wrong)")
    if tp > 0:
        text += "; latent: only TP rank 0's buffer is published"
    return text


RANKS = [(d, t) for d in range(DP) for t in range(TP)]
RANK_IDS = [f"dp{d}-tp{t}" for d, t in RANKS]

if REJECTION is None:

    @pytest.mark.parametrize("dp,tp", RANKS, ids=RANK_IDS)
    def test_rank_captures_its_tokens(engine, monkeypatch, dp, tp):
        rows, _ = SIZINGS[SIZING]
        if rows < NUM_TOKENS[dp]:
            pytest.fail(f"capture buffer has {rows} rows, dp {dp} runs {NUM_TOKENS[dp]} tokens", pytrace=False)
        try:
            got, _ = run_rank(engine, monkeypatch, dp, tp, rows)
            failure = first_difference(got, expected_buffer(dp, tp, rows), dp, tp)
        except CaptureRaised as e:
            failure = f"dp {dp} tp {tp}: {e}; the reference accepts this step"
        if failure:  # failed outside the except block, so the report is the one line
            pytest.fail(failure, pytrace=False)

    if TP > 1:

        def test_tp_ranks_issue_the_same_collectives(engine, monkeypatch):
            rows, _ = SIZINGS[SIZING]
            for d in range(DP):
                counts = []
                for t in range(TP):
                    try:
                        counts.append(run_rank(engine, monkeypatch, d, t, max(rows, NUM_TOKENS[d]))[1])
                    except CaptureRaised:
                        counts.append(None)  # test_rank_captures_its_tokens reports it
                known = [(t, c) for t, c in enumerate(counts) if c is not None]
                for t, c in known[1:]:
                    if c != known[0][1]:
                        i = next(i for i in range(len(c)) if c[i] != known[0][1][i])
                        pytest.fail(f"call {i + 1} of {len(CALLS)}: the TP ranks of dp {d} disagree on the TP "
                                    f"all-gather (tp {known[0][0]} issues {known[0][1][i]}, tp {t} issues {c[i]}): "
                                    f"a hang in production", pytrace=False)

else:

    def test_step_is_rejected(engine, monkeypatch):
        rows = max([SIZINGS[SIZING][0]] + NUM_TOKENS)
        for d, t in RANKS:
            try:
                run_rank(engine, monkeypatch, d, t, rows)
            except CaptureRaised:
                return
        pytest.fail(f"every rank accepted a step the reference rejects: {REJECTION}", pytrace=False)

if MONOLITHIC:

    def test_replay_buffer_holds_the_kernel_rows():
        _, rows = SIZINGS[SIZING]
        for i, call in enumerate(CALLS):
            if call["kernel_rows"] > rows:
                pytest.fail(f"replay buffer has {rows} rows, the {'gathered batch' if PATH == 'gathered' else 'batch'}"
                            f" the monolithic kernel processes has {call['kernel_rows']} (call {i + 1} of "
                            f"{len(CALLS)})", pytrace=False)
)PY";

}  // namespace r3::vllm
