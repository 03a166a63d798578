// The Python of SGLang's exported trace test (trace_export.cpp's data lines come first): each DP
// rank's capturer built as RoutedExpertsCapturer.__init__ builds it (the device cache of the
// model SIZING names), the names its module looks up at call time faked for the rank whose
// forward runs (with or without DP attention, no all-to-all backend), a KV-slot allocator and
// radix tree in place of the memory pool's, and serve(), which runs the trace. What it stands in
// for, and why:
//  - the model: each forward's rows carry the routes of the trace's truth (a rejected draft's row
//    DRAFT_VALUE: its token is not the one sampled there); under DP attention every rank's MoE
//    layer hands capture() the DP-gathered rows the per-step model lays out, and the forward end
//    gives the window what model_runner.py gives it (can_run_graph, the decode runner's bs);
//  - the memory pool: slot 0 is the dummy slot; every forwarded row gets a fresh slot, never
//    reused, so no finding here is the allocator's; a prefix hit maps its positions to the slots
//    of the first forward since the last flush that computed them (the radix tree), a retract
//    drops the request's slots (it recomputes into new ones);
//  - the overlap scheduler (contract section 5): on_forward_end(..., no_copy_to_cpu=True) returns
//    the deferred output; the harness copies its tensors to host (map_device_tensors, as
//    GenerationBatchResult.copy_to_cpu does) and calls finalize after the forward of step
//    COPY_DONE[S] - 1, before that step's result processing reads anything back; a copy that
//    runs late reads the device cache as the later forward left it, as a late copy on the GPU does;
//  - result processing: the requests a step finishes are read back with get_topk after that
//    step's rows are finalized.
#pragma once

#include <string_view>

namespace r3::sglang {

inline constexpr std::string_view kSglangTraceHarness = R"PY(

import sys
import types

SHARED_EXPERTS = 1  # fused shared-expert columns of the device cache (ids EXPERTS ..), dropped by the window


class Parallel:
    """get_parallel(): the DP rank whose forward runs, attn-TP rank 0 (the rank whose rows are published)."""
    dp_size, attn_tp_size, attn_tp_rank, attn_dp_rank = (DP if DP_ATTENTION else 1), TP, 0, 0


class Schedule:
    chunked_prefill_size = CHUNKED_PREFILL_SIZE
    max_running_requests = MAX_RUNNING_REQUESTS
    disable_overlap_schedule = not OVERLAP


class A2aBackend:
    """get_moe_a2a_backend(): no all-to-all backend."""

    def __getattr__(self, name):
        if name.startswith("is_"):
            return lambda: name == "is_none"
        raise AttributeError(name)


def attn_tp_gather(output, input_):
    if output.numel() != input_.numel():
        raise RuntimeError("attn_tp_all_gather_into_tensor: the harness drives no attention-TP gather")
    output.copy_(input_.reshape(output.shape))


def install_fakes(module, mp, layout):
    backend = A2aBackend()
    for name, fake in (("get_parallel", lambda: Parallel), ("get_schedule", lambda: Schedule),
                       ("get_moe_a2a_backend", lambda: backend), ("is_dp_attention_enabled", lambda: DP_ATTENTION),
                       ("attn_tp_all_gather_into_tensor", attn_tp_gather), ("get_capture_layout", lambda: layout[0]),
                       ("get_attention_dp_rank", lambda: Parallel.attn_dp_rank)):
        mp.setattr(module, name, fake, raising=False)
    window = getattr(module, "get_dp_local_slice_cpu", None)
    if window is not None:  # it reads get_attention_dp_rank from its own module (layers/dp_attention.py)
        mp.setitem(window.__globals__, "get_attention_dp_rank", lambda: Parallel.attn_dp_rank)


def engine_class(capturer_class, names):
    """The engine's own cache class beside its capturer (state_capturer/base.py: BaseDeviceCache)."""
    for klass in capturer_class.__mro__:
        for name in names:
            found = getattr(sys.modules.get(klass.__module__), name, None)
            if isinstance(found, type):
                return found
    pytest.fail(f"none of {', '.join(names)} is defined beside {ENGINE} or its base classes", pytrace=False)


def make_capturer(capturer_class):
    """A rank's capturer as RoutedExpertsCapturer.__init__ builds it: the device cache
    [SIZINGS[SIZING], LAYERS, TOP_K + shared] and the host cache [HOST_SLOTS, LAYERS, TOP_K], zeroed."""
    capturer = capturer_class.__new__(capturer_class)
    device_class = engine_class(capturer_class, ("BaseDeviceCache", "DeviceCache"))
    device = device_class.__new__(device_class)
    device.buffer = torch.zeros((SIZINGS[SIZING], LAYERS, TOP_K + SHARED_EXPERTS), dtype=torch.int32)
    device.num_layers, device.topk_size, device.name = LAYERS, TOP_K + SHARED_EXPERTS, "routed_experts"
    host_class = engine_class(capturer_class, ("BaseHostCache", "HostCache"))
    host = host_class.__new__(host_class)
    host.buffer = torch.zeros((HOST_SLOTS, LAYERS, TOP_K), dtype=torch.int32)
    host.num_tokens, host.num_layers, host.topk_size, host.name = HOST_SLOTS, LAYERS, TOP_K, "routed_experts"
    capturer.device_cache, capturer.host_cache = device, host
    capturer.num_layers, capturer.topk_size, capturer.num_fused_shared_experts = LAYERS, TOP_K, SHARED_EXPERTS
    capturer.top_k = TOP_K  # r3fuzz's sample names topk_size so
    return capturer


class Rank:
    """One DP rank: its capturer, its req_to_token pool, its slots and radix tree."""

    def __init__(self, capturer_class):
        self.capturer = make_capturer(capturer_class)
        # int64, not SGLang's int32: torch before 2.0 cannot index a tensor with int32 indices.
        self.req_to_token_pool = types.SimpleNamespace(
            req_to_token=torch.zeros((len(TOKENS), LONGEST), dtype=torch.int64))
        self.next_slot = 1
        self.tree = {}  # token prefix -> the slot of the first forward since the last flush that computed it


class CaptureLayout:
    """get_capture_layout(): not SGLang's; what r3fuzz's fixed sample reads about the call's rows."""

    def __init__(self, start, rows, offset):
        self.dp_local_start, self.dp_local_num_tokens, self.batch_offset = start, rows, offset


def row_route(row, version):
    """The route a batch row (request, position, kept, draft) computes at `version`: a draft's token
    (rejected, or past the request's last output) is none the trace names, so DRAFT_VALUE."""
    req, pos, _, draft = row
    if draft:
        return [[DRAFT_VALUE] * TOP_K for _ in range(LAYERS)]
    return route_of(req, pos, version)


def cuda_graph_batch(bs, captured_req_width):
    """model_runner.py, forward: cuda_graph_batch=getattr(self.decode_cuda_graph_runner, "bs", None) upstream;
    sglang-miles passes the replay's tokens, bs * captured_req_width (R3FUZZ_SGLANG_VERSION=miles)."""
    if VERSION == "miles":
        return bs * captured_req_width if bs else None
    return bs


def capture_calls(rank, step, d, layout):
    """The MoE layers' capture calls of rank d's forward. Without DP attention: its batch rows, then its
    CUDA-graph padding. Under DP attention: each call's DP-gathered tensor (STEPS[s]["dp_attention"])."""
    version, spec, fw = step["version"], step["ranks"][d], step["dp_attention"]
    if fw is None:
        tensors = [[row_route(row, version) for row in spec["rows"]] + [padding_row()] * spec["padding"]]
        layouts = [CaptureLayout(0, len(tensors[0]), 0)]
    else:
        tensors = [[padding_row() if at is None else row_route(step["ranks"][at[0]]["rows"][at[1]], version)
                    for at in fw["tensors"][call["received"][d]]] for call in fw["calls"]]
        layouts = [CaptureLayout(call["dp_local_start"][d], call["dp_local_num_tokens"][d], call["batch_offset"][d])
                   for call in fw["calls"]]
    shared = list(range(EXPERTS, EXPERTS + SHARED_EXPERTS))
    for routes, call_layout in zip(tensors, layouts):
        layout[0] = call_layout
        for layer in range(LAYERS):
            topk = torch.tensor([route[layer] + shared for route in routes], dtype=torch.int32)
            engine_call("capture", rank.capturer.capture, layer, topk.reshape(len(routes), TOP_K + SHARED_EXPERTS))


def forward(rank, step, d, layout):
    """Rank d's forward: fresh KV slots for its rows, the MoE layers' captures, then on_forward_end
    (padding rows at slot 0, the dummy slot): the deferred copy under the overlap scheduler, or None."""
    Parallel.attn_dp_rank = d
    slots = []
    for req, pos, kept, draft in step["ranks"][d]["rows"]:
        slot = rank.next_slot
        rank.next_slot += 1
        if not draft:  # a rejected draft's slot is freed (its position is computed again), one past the end unread
            rank.req_to_token_pool.req_to_token[req, pos] = slot
        slots.append(slot)
        if kept:
            rank.tree.setdefault(tuple(TOKENS[req][: pos + 1]), slot)
    capture_calls(rank, step, d, layout)
    fw = step["dp_attention"]
    if fw is None:
        batch = types.SimpleNamespace(out_cache_loc=torch.tensor(slots, dtype=torch.int64),
                                      global_num_tokens_cpu=[len(slots)])
        graph, graph_batch = False, None
    else:
        slots += [0] * (fw["out_cache_loc"][d] - len(slots))
        batch = types.SimpleNamespace(out_cache_loc=torch.tensor(slots, dtype=torch.int64),
                                      global_num_tokens_cpu=list(fw["global_num_tokens_cpu"]),
                                      forward_mode=fw["forward_mode"])
        graph, graph_batch = fw["can_run_graph"], cuda_graph_batch(fw["runner_bs"][d], fw["captured_req_width"])
    if OVERLAP:
        return engine_call("on_forward_end", rank.capturer.on_forward_end, batch, graph, graph_batch, no_copy_to_cpu=True)
    engine_call("on_forward_end", rank.capturer.on_forward_end, batch, graph, graph_batch)
    return None


def copy_to_host(output):
    """The scheduler's copy of a deferred output (GenerationBatchResult.copy_to_cpu): a host copy
    of each device tensor, taken when the copy runs. Upstream's output takes the copy primitive
    (map_device_tensors); a copy_to_cpu of the output's own is called as it is."""
    if hasattr(output, "map_device_tensors"):
        output.map_device_tensors(lambda t: t.detach().to("cpu").clone())
    else:
        output.copy_to_cpu()


def read_back(rank, req):
    """get_topk through req_to_token: the request's rows [start, seqlen - 1) from the host cache."""
    try:
        rows = rank.capturer.get_topk(req, FINAL_LEN[req], rank.req_to_token_pool, START_LEN[req])
    except Exception as e:
        return ("raised", f"get_topk raised {type(e).__name__}: {e}")
    return ("routes", torch.as_tensor(rows).tolist())


def run_trace(module, cls, mp):
    layout = [None]
    install_fakes(module, mp, layout)
    ranks = [Rank(cls) for _ in range(DP)]
    outcomes, waiting = {}, []  # waiting: (step, its copies, its collect list), in step order

    def stopped(why):
        for req in EXPECTED:
            outcomes.setdefault(req, ("unfinished", f"the serving run stopped at {why}"))
        return outcomes

    for s, step in enumerate(STEPS):
        for event in step["events"]:
            if event[0] == "hit":
                req, hit = event[1], event[2]
                rank = ranks[RANK_OF[req]]
                for pos in range(hit):
                    rank.req_to_token_pool.req_to_token[req, pos] = rank.tree[tuple(TOKENS[req][: pos + 1])]
            elif event[0] == "preempt":
                ranks[RANK_OF[event[1]]].req_to_token_pool.req_to_token[event[1]] = 0
            elif event[0] == "flush":
                for rank in ranks:
                    rank.tree.clear()
        for req in step["collect_before"]:
            outcomes[req] = read_back(ranks[RANK_OF[req]], req)
        copies = []
        for d, rank in enumerate(ranks):
            if not step["ranks"][d]["rows"] and step["dp_attention"] is None:
                continue  # under DP attention an idle rank runs the forward too (an idle batch)
            try:
                copies.append(forward(rank, step, d, layout))
            except EngineRaised as e:
                return stopped(f"step {s}: dp {d}'s {e}")
        waiting.append((s, [c for c in copies if c is not None], step["collect"]))
        # Every copy that runs after this forward, then the result processing it unblocks, in step order.
        while waiting and (not OVERLAP or COPY_DONE[waiting[0][0]] <= s + 1):
            _, done, collect = waiting.pop(0)
            for output in done:
                copy_to_host(output)
                output.finalize()
            for req in collect:
                outcomes[req] = read_back(ranks[RANK_OF[req]], req)
    for _, done, collect in waiting:  # copies the record lands at the end
        for output in done:
            copy_to_host(output)
            output.finalize()
        for req in collect:
            outcomes[req] = read_back(ranks[RANK_OF[req]], req)
    return outcomes


def serve(module, cls):
    """Every step of the trace on each DP rank's capturer of class `cls`; what each finished request got."""
    if SIZING not in SIZINGS:
        pytest.fail(f"R3FUZZ_SIZING={SIZING} is none of {', '.join(SIZINGS)}", pytrace=False)
    if VERSION not in ("upstream", "miles"):
        pytest.fail(f"R3FUZZ_SGLANG_VERSION={VERSION} is neither upstream nor miles", pytrace=False)
    with pytest.MonkeyPatch.context() as mp:
        return run_trace(module, cls, mp)
)PY";

}  // namespace r3::sglang
