// The Python of SGLang's exported trace test (trace_export.cpp's data lines come first): each DP
// rank's capturer built as RoutedExpertsCapturer.__init__ builds it, the names its module looks up
// at call time faked for a rank without DP attention, a KV-slot allocator and radix tree in place
// of the memory pool's, and serve(), which runs the trace. What it stands in for, and why:
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
    """get_parallel(): one DP rank without DP attention, attn-TP rank 0 (the rank whose rows are published)."""
    dp_size, attn_tp_size, attn_tp_rank, attn_dp_rank = 1, TP, 0, 0


class Schedule:
    chunked_prefill_size = -1
    max_running_requests = DEVICE_ROWS
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
                       ("get_moe_a2a_backend", lambda: backend), ("is_dp_attention_enabled", lambda: False),
                       ("attn_tp_all_gather_into_tensor", attn_tp_gather), ("get_capture_layout", lambda: layout[0])):
        mp.setattr(module, name, fake, raising=False)


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
    [DEVICE_ROWS, LAYERS, TOP_K + shared] and the host cache [HOST_SLOTS, LAYERS, TOP_K], zeroed."""
    capturer = capturer_class.__new__(capturer_class)
    device_class = engine_class(capturer_class, ("BaseDeviceCache", "DeviceCache"))
    device = device_class.__new__(device_class)
    device.buffer = torch.zeros((DEVICE_ROWS, LAYERS, TOP_K + SHARED_EXPERTS), dtype=torch.int32)
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
    """get_capture_layout(): not SGLang's; what r3fuzz's fixed sample reads (one rank, the batch at row 0)."""

    def __init__(self, rows):
        self.dp_local_start, self.dp_local_num_tokens, self.batch_offset = 0, rows, 0


def forward(rank, step, d, layout):
    """The MoE layers' captures with the step's routes, then on_forward_end: the deferred copy, or None."""
    spec = step["ranks"][d]
    slots = []
    for req, pos, kept in spec["rows"]:
        slot = rank.next_slot
        rank.next_slot += 1
        rank.req_to_token_pool.req_to_token[req, pos] = slot
        slots.append(slot)
        if kept:
            rank.tree.setdefault(tuple(TOKENS[req][: pos + 1]), slot)
    routes = [route_of(req, pos, step["version"]) for req, pos, _ in spec["rows"]]
    layout[0] = CaptureLayout(len(routes) + spec["padding"])
    for layer in range(LAYERS):
        experts = [route[layer] for route in routes] + [[PADDING_VALUE] * TOP_K] * spec["padding"]
        shared = [list(range(EXPERTS, EXPERTS + SHARED_EXPERTS))] * len(experts)
        rows = [e + s for e, s in zip(experts, shared)]
        rank.capturer.capture(layer, torch.tensor(rows, dtype=torch.int32).reshape(len(rows), TOP_K + SHARED_EXPERTS))
    batch = types.SimpleNamespace(out_cache_loc=torch.tensor(slots, dtype=torch.int64),
                                  global_num_tokens_cpu=[len(slots)])
    if OVERLAP:
        return rank.capturer.on_forward_end(batch, False, None, no_copy_to_cpu=True)
    rank.capturer.on_forward_end(batch, False, None)
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
            if not step["ranks"][d]["rows"]:
                continue
            try:
                copies.append(forward(rank, step, d, layout))
            except Exception as e:
                return stopped(f"step {s}: dp {d}'s capture raised {type(e).__name__}: {e}")
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
    with pytest.MonkeyPatch.context() as mp:
        return run_trace(module, cls, mp)
)PY";

}  // namespace r3::sglang
