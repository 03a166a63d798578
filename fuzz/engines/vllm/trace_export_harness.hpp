// The Python of vLLM's exported trace test (trace_export.cpp's data lines come first): one
// AuxOutputSchedulerConnector and one AuxOutputWorkerConnector per DP rank, run through the trace
// as vLLM's scheduler and Model Runner V2 call them (contract 2.3), and serve(). What it stands in
// for, and why:
//  - the worker's world: its __init__ runs as written, with the names its module looks up at
//    call time swapped (install_fakes): the routed-experts capturer (whose snapshot is the step's
//    rows, as route_of computes them), the TP group (rank 0 owns the data plane), and the KV
//    block sizes (one hash block per KV block of PAGE tokens). aux_output_config.max_bytes is None,
//    so the store has vLLM's default size: one object per KV block (KV_BLOCKS).
//  - the scheduler: Request objects with the fields the connector reads (request_id, block_hashes,
//    num_tokens, num_output_tokens, sampling_params.routed_experts_prompt_start, is_finished);
//    block hashes chain a sha256 over each full block of the known tokens, so two are equal
//    exactly when the token prefixes are; a SchedulerOutput whose num_scheduled_tokens lists the
//    step's requests in the scheduler's order; request_finished at a preemption (N4 (a), as
//    vLLM's test_scheduler_connector_recreates_preempted_request_state expects), at an abort and
//    at a finish; reset at a prefix-cache reset; take_output for each request the worker's output
//    names, after its num_tokens took the step's samples (and is_finished() is true on the step
//    that finishes it).
//  - Model Runner V2: the batch order (sort_batch_req_ids: requests with drafts first, then those
//    whose scheduled tokens are the decode query length, then by scheduled tokens, stably),
//    token_starts (each request's num_computed_tokens), query_start_loc, num_sampled (1 when the
//    step samples for it) and num_rejected (a verify's drafts past what it keeps, whose rows carry
//    DRAFT_VALUE: their tokens are not the ones sampled there).
//  - the trainer: each request's rows are placed at the positions take_output's output names
//    (token_start on); a position returned twice without a preemption between is an error.
// The proposed fix reads two more things, which vLLM's own classes ignore: set_weight_version(v)
// on the worker before each forward, and Request.kv_block_versions, the weight versions of the KV
// of each full block the request holds before the forward (what the KV cache manager would record).
#pragma once

#include <string_view>

namespace r3::vllm {

inline constexpr std::string_view kVllmTraceHarness = R"PY(

import hashlib
import sys
import types

import numpy as np

STEP_ROWS = [torch.zeros((0, LAYERS, TOP_K), dtype=torch.int32)]  # what the capturer holds after the forward


class FakeCapturer:
    """routed_experts_capturer.py, RoutedExpertsCapturer: the worker reads its shape and dtype and
    snapshots the forward's rows."""
    shape_per_token = (LAYERS, TOP_K)
    output_dtype_name = "int32"

    def __init__(self, *args, **kwargs):
        pass

    def snapshot_routing_data(self, num_rows):
        return STEP_ROWS[0][:num_rows].clone()


class TpGroup:
    is_first_rank = True  # the output rank owns the auxiliary output data plane


def install_fakes(module, mp):
    for name, fake in (("RoutedExpertsCapturer", FakeCapturer),
                       ("bind_routed_experts_capturer", lambda model, capturer: None),
                       ("get_tp_group", lambda: TpGroup),
                       ("resolve_kv_cache_block_sizes", lambda kv_cache_config, vllm_config: (PAGE, PAGE))):
        mp.setattr(module, name, fake, raising=False)


def scheduler_connector_class(worker_class):
    """The scheduler connector beside the worker connector: the class's own pairing (r3fuzz's
    samples), else AuxOutputSchedulerConnector of the package's connector module (vLLM's)."""
    paired = getattr(worker_class, "scheduler_connector_class", None)
    if paired is not None:
        return paired
    package = worker_class.__module__.rpartition(".")[0]
    name = package + ".connector" if package else "connector"
    try:
        return importlib.import_module(name).AuxOutputSchedulerConnector
    except (ImportError, AttributeError) as e:
        pytest.fail(f"no AuxOutputSchedulerConnector in {name} beside {ENGINE} ({type(e).__name__}: {e})",
                    pytrace=False)


def chained_hashes(tokens):
    out, parent = [], b""
    for b in range(len(tokens) // PAGE):
        parent = hashlib.sha256(parent + repr(tokens[b * PAGE:(b + 1) * PAGE]).encode()).digest()
        out.append(parent)
    return out


class Request:
    """vllm.v1.request.Request as the connector reads it."""

    def __init__(self, req):
        self.req = req
        self.request_id = f"request-{req}"
        self.sampling_params = types.SimpleNamespace(routed_experts_prompt_start=PROMPT_START[req])
        self.num_tokens = PROMPT_LEN[req]
        self.finished = False
        self.kv_block_versions = []  # the fix's interface (see the module's comments)
        self._hashes = (-1, [])

    @property
    def num_output_tokens(self):
        return self.num_tokens - PROMPT_LEN[self.req]

    @property
    def block_hashes(self):
        if self._hashes[0] != self.num_tokens:
            self._hashes = (self.num_tokens, chained_hashes(TOKENS[self.req][: self.num_tokens]))
        return self._hashes[1]

    def is_finished(self):
        return self.finished


class Rank:
    """One DP rank: its scheduler connector, its worker connector, and the requests it tracks."""

    def __init__(self, worker_class, connector_class):
        config = types.SimpleNamespace(aux_output_config=types.SimpleNamespace(max_bytes=None),
                                       scheduler_config=types.SimpleNamespace(max_num_seqs=len(TOKENS) + 1),
                                       max_concurrent_batches=1)
        kv_cache_config = types.SimpleNamespace(num_blocks=KV_BLOCKS, block_size=PAGE)
        self.worker = engine_call("AuxOutputWorkerConnector.__init__", worker_class, vllm_config=config, model=None,
                                  kv_cache_config=kv_cache_config, max_num_batched_tokens=MAX_BATCHED_TOKENS)
        self.connector = engine_call("AuxOutputSchedulerConnector.__init__", connector_class)
        self.requests = {}  # request_id -> Request: every request the connector may still track


def kv_block_versions(runs):
    """Per full block of the KV a request holds, the weight versions of its positions."""
    versions = [v for v, count in runs for _ in range(count)]
    return [tuple(versions[b * PAGE:(b + 1) * PAGE]) for b in range(len(versions) // PAGE)]


def batch_order(runs):
    """sort_batch_req_ids (Model Runner V2): requests with drafts first, then those scheduling the decode
    query length (1 + the drafts), then by scheduled tokens, stably."""
    def key(run):
        tokens = run[2] - run[1]
        return (not run[8], tokens != 1 + DRAFTS, tokens)
    return sorted(runs, key=key)


def row_route(req, pos, kept_end, version):
    """A kept row's route; a rejected draft's (or a token past the request's last output) is none the
    trace names: DRAFT_VALUE (process_output drops it before capture)."""
    if pos >= kept_end or pos >= len(TOKENS[req]):
        return [[DRAFT_VALUE] * TOP_K for _ in range(LAYERS)]
    return route_of(req, pos, version)


def forward(rank, runs, reqs, version, finishing, placed):
    batch = batch_order(runs)
    ids = [reqs[run[0]].request_id for run in batch]
    token_starts = np.array([run[1] for run in batch], dtype=np.int64)
    query_start_loc = np.zeros(len(batch) + 1, dtype=np.int32)
    np.cumsum([run[2] - run[1] for run in batch], out=query_start_loc[1:])
    routes = [row_route(run[0], p, run[3], version) for run in batch for p in range(run[1], run[2])]
    STEP_ROWS[0] = torch.tensor(routes, dtype=torch.int32).reshape(len(routes), LAYERS, TOP_K)
    if hasattr(rank.worker, "set_weight_version"):
        rank.worker.set_weight_version(version)
    pending = engine_call("prepare_output", rank.worker.prepare_output, ids, token_starts, query_start_loc)
    sampled = np.array([1 if run[6] else 0 for run in batch], dtype=np.int32)
    rejected = np.array([run[2] - run[3] for run in batch], dtype=np.int32)
    out = engine_call("process_output", rank.worker.process_output, ids, pending.token_starts,
                      pending.query_start_loc, pending.routed_experts.numpy(), sampled, rejected)
    pending.complete()
    for run in runs:
        request = reqs[run[0]]
        request.num_tokens = run[5]
        request.finished = run[0] in finishing
        if request.request_id not in out:
            continue
        rows = engine_call("take_output", rank.connector.take_output, request, out)
        if rows is not None:
            placed(run[0], out[request.request_id].token_start, np.asarray(rows).tolist())


def run_trace(module, worker_class, mp):
    install_fakes(module, mp)
    connector_class = scheduler_connector_class(worker_class)
    outcomes, assembled, reemits = {}, {r: {} for r in range(len(TOKENS))}, set()
    reqs = [Request(r) for r in range(len(TOKENS))]

    def stopped(why):
        for req in EXPECTED:
            outcomes.setdefault(req, ("unfinished", f"the serving run stopped at {why}"))
        return outcomes

    def placed(req, start, rows):
        for i, row in enumerate(rows):
            if start + i in assembled[req] and req not in reemits:
                raise EngineRaised(f"take_output returned request {req} position {start + i} a second time")
            assembled[req][start + i] = row

    def returned(req):
        positions = [p for p, _ in EXPECTED[req]]
        p = min([positions[0] if positions else PROMPT_START[req]] + list(assembled[req]))
        rows = []
        while p in assembled[req]:
            rows.append(assembled[req][p])
            p += 1
        return rows

    def finish(ranks, req):
        request = reqs[req]
        request.finished = True
        rank = ranks[RANK_OF[req]]
        engine_call("request_finished", rank.connector.request_finished, request)
        rank.requests.pop(request.request_id, None)
        if req in EXPECTED:
            outcomes[req] = ("routes", returned(req))

    ranks = []
    try:
        for _ in range(DP):
            ranks.append(Rank(worker_class, connector_class))
    except EngineRaised as e:
        close_all(ranks)
        return stopped(f"start-up: {e}")
    try:
        outcomes = run_steps(ranks, reqs, outcomes, reemits, stopped, placed, finish)
    except BaseException:
        close_all(ranks)
        raise
    failed = close_all(ranks)
    stopped_earlier = any(kind == "unfinished" for kind, _ in outcomes.values())
    if failed is not None and not stopped_earlier:  # else close() raises the failure that stopped it
        # The background store's thread raises a failed publication at its next call: at the
        # end of the run, close(). The serving run fails there, whatever each request got.
        for req in EXPECTED:
            if outcomes.get(req, ("",))[0] in ("routes", "none"):
                outcomes[req] = ("raised", f"at shutdown, {failed}")
    return outcomes


def close_all(ranks):
    """close() on every worker (it ends the background store's thread); the first error, or None."""
    failed = None
    for rank in ranks:
        close = getattr(rank.worker, "close", None)
        if close is None:
            continue
        try:
            engine_call("close", close)
        except EngineRaised as e:
            failed = failed or str(e)
    return failed


def run_steps(ranks, reqs, outcomes, reemits, stopped, placed, finish):
    for s, step in enumerate(STEPS):
        try:
            for event in step["events"]:
                if event[0] == "preempt":
                    rank, request = ranks[RANK_OF[event[1]]], reqs[event[1]]
                    engine_call("request_finished", rank.connector.request_finished, request)
                    rank.requests.pop(request.request_id, None)
                    reemits.add(event[1])
                else:
                    for rank in ranks:
                        engine_call("reset", rank.connector.reset)
            for req in step["aborted"]:
                finish(ranks, req)
            for d, rank in enumerate(ranks):
                runs = [run for run in step["runs"] if RANK_OF[run[0]] == d]
                for run in runs:
                    request = reqs[run[0]]
                    request.num_tokens = run[4]
                    request.kv_block_versions = kv_block_versions(run[7])
                    rank.requests[request.request_id] = request
                scheduled = {reqs[run[0]].request_id: run[2] - run[1] for run in runs}
                meta = engine_call("build_connector_meta", rank.connector.build_connector_meta,
                                   types.SimpleNamespace(num_scheduled_tokens=scheduled), dict(rank.requests))
                engine_call("begin_step", rank.worker.begin_step, meta)
                if runs:
                    forward(rank, runs, reqs, step["version"], set(step["finished"]), placed)
            for req in step["finished"]:
                finish(ranks, req)
        except EngineRaised as e:
            return stopped(f"step {s}: {e}")
    return outcomes


def serve(module, cls):
    """Every step of the trace on each DP rank's connectors; what each finished request got."""
    with pytest.MonkeyPatch.context() as mp:
        return run_trace(module, cls, mp)
)PY";

}  // namespace r3::vllm
