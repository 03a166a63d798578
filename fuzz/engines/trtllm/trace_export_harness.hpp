// The Python of TensorRT-LLM's exported trace test (trace_export.cpp's data lines come first):
// the world RouteCapture runs in, faked on CPU, and serve(), which drives RouteCapture's static
// facade through the trace. What it fakes, and why:
//  - CUDA streams and events. The forward stream runs everything at once. A side stream
//    (torch.cuda.Stream()) queues each non-blocking copy_ issued on it with a snapshot of its
//    source; an event recorded there lands the copies queued before it when the trace's copies
//    record says (COPY_SEEN), or when it or a later one is synchronized: copies on one stream
//    land in order. The snapshot is the source at the copy's issue, which is what the next
//    forward's wait_before_overwrite guarantees (contract section 5, TRT-LLM).
//  - LlmRequest: the attributes RouteCapture reads (py_request_id, py_prompt_len,
//    context_current_position, context_chunk_size, prepopulated_prompt_len, is_dummy,
//    get_tokens, py_result), as the scheduler would set them for the trace's step. The host
//    state is the step's own (the overlap scheduler's lag is the capture's concern).
//  - the model engine (max_num_tokens, no PP, no spec) and, when tensorrt_llm is importable, its
//    MoE layer registry (tensorrt_llm._torch.utils.get_model_extra_attrs), which the real capture
//    reads to size its device buffer.
// RouteCapture.create changed between the versions read: at 06a976ce it keeps one process-wide
// capture on builtins behind static methods (each serve() starts with none); in the later stored
// version it returns the model engine's capture, whose methods have the same names, and the MoE
// hook finds it in the model extra attrs. open_capture drives either.
#pragma once

#include <string_view>

namespace r3::trtllm {

inline constexpr std::string_view kTrtllmTraceHarness = R"PY(

import builtins
import inspect
import types

ORIGINAL_COPY = torch.Tensor.copy_
STEP = [0]  # the step being run
SIDE_EVENTS = []  # recordings of events on a side stream, in record order


class FakeStream:
    """A CUDA stream on CPU: the forward stream (side=False) runs everything at once; a side stream
    queues the non-blocking copies issued on it until an event recorded after them lands."""

    def __init__(self, device=None, priority=0, side=True):
        self.side = side
        self.queued = []

    def wait_event(self, event):
        pass  # the forward ran before anything on a side stream reads its output

    def wait_stream(self, stream):
        pass

    def query(self):
        advance()
        return not self.queued and all(r.landed for r in SIDE_EVENTS)

    def synchronize(self):
        land_through(len(SIDE_EVENTS) - 1)
        for dst, src in self.queued:
            ORIGINAL_COPY(dst, src)
        self.queued = []


FORWARD_STREAM = FakeStream(side=False)
CURRENT = [FORWARD_STREAM]


class Recording:
    """One record() of an event on a side stream: the copies queued before it, and when it lands."""

    def __init__(self, ops, seen, index):
        self.ops, self.seen, self.index, self.landed = ops, seen, index, False


class FakeEvent:
    """A CUDA event: complete at once on the forward stream; on a side stream its latest recording
    lands the copies queued before it at the step COPY_SEEN gives for the step that recorded it.
    An event may be recorded again (a ring slot's): each recording lands on its own."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.recording = None  # never recorded on a side stream: complete, as CUDA's is

    def record(self, stream=None):
        stream = stream or CURRENT[-1]
        if not stream.side:
            self.recording = None
            return
        ops, stream.queued = stream.queued, []
        seen = COPY_SEEN[STEP[0]] if STEP[0] < len(COPY_SEEN) else STEP[0]
        self.recording = Recording(ops, seen, len(SIDE_EVENTS))
        SIDE_EVENTS.append(self.recording)

    def query(self):
        advance()
        return self.recording is None or self.recording.landed

    def synchronize(self):
        if self.recording is not None and not self.recording.landed:
            land_through(self.recording.index)

    def wait(self, stream=None):
        pass


def land_through(index):
    """Land every side-stream recording up to `index`, in record order, and the copies before each."""
    for recording in SIDE_EVENTS[: index + 1]:
        if not recording.landed:
            for dst, src in recording.ops:
                ORIGINAL_COPY(dst, src)
            recording.ops = []
            recording.landed = True


def advance():
    """Land what the copies record says has landed by now (and, stream order, everything before it)."""
    due = [r.index for r in SIDE_EVENTS if not r.landed and r.seen <= STEP[0]]
    if due:
        land_through(max(due))


def queued_copy(self, src, non_blocking=False):
    stream = CURRENT[-1]
    if not stream.side:
        return ORIGINAL_COPY(self, src, non_blocking)
    stream.queued.append((self, src.detach().clone()))
    return self


class UseStream:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        CURRENT.append(self.stream or CURRENT[-1])
        return self.stream

    def __exit__(self, *exc):
        CURRENT.pop()
        return False


def fake_cuda(mp):
    STEP[0] = 0
    SIDE_EVENTS.clear()
    FORWARD_STREAM.queued = []
    mp.setattr(torch.cuda, "Stream", FakeStream)
    mp.setattr(torch.cuda, "Event", FakeEvent)
    mp.setattr(torch.cuda, "current_stream", lambda device=None: CURRENT[-1])
    mp.setattr(torch.cuda, "default_stream", lambda device=None: FORWARD_STREAM)
    mp.setattr(torch.cuda, "stream", UseStream)
    mp.setattr(torch.cuda, "synchronize", lambda device=None: land_through(len(SIDE_EVENTS) - 1))
    mp.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    mp.setattr(torch.Tensor, "copy_", queued_copy)


def fake_model_registry(module, mp, attrs):
    """The per-forward model extra attrs (MoE layers; later versions also find their capture there),
    where TensorRT-LLM's module reads them: tensorrt_llm._torch.utils, and its own imported name."""
    try:
        utils = importlib.import_module("tensorrt_llm._torch.utils")
        mp.setattr(utils, "get_model_extra_attrs", lambda: attrs, raising=False)
    except ImportError:
        pass  # not TensorRT-LLM's own module (a sample engine): nothing reads the registry
    if hasattr(module, "get_model_extra_attrs"):
        mp.setattr(module, "get_model_extra_attrs", lambda: attrs)


def open_capture(cls, attrs):
    """RouteCapture.create as the model engine calls it, given the arguments its signature takes:
    06a976ce keeps a process-wide capture behind its static methods (returns None: drive the
    class); a later version returns one capture per model engine (drive it)."""
    given = {"rank": 0, "model_engine": fake_model_engine(), "enabled": True, "pp_size": 1, "is_spec_decode": False,
             "is_draft_model": False}
    params = inspect.signature(cls.create).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        given = {name: value for name, value in given.items() if name in params}
    made = cls.create(**given)
    if made is not None:
        attrs["route_capture"] = made
        return made
    if getattr(cls, "get", None) is not None and cls.get() is not None:
        return cls
    pytest.fail(f"{ENGINE}.create({', '.join(f'{k}={v!r}' for k, v in given.items() if k != 'model_engine')}, "
                f"model_engine=...) made no capture", pytrace=False)


class FakeResult:
    """LlmRequest.py_result: where attach_routes puts routed_experts."""

    def __init__(self):
        self._additional_generation_outputs = None

    def append_additional_generation_outputs(self, name, value):
        if self._additional_generation_outputs is None:
            self._additional_generation_outputs = {}
        self._additional_generation_outputs.setdefault(name, []).append(value)


class FakeRequest:
    """The LlmRequest fields RouteCapture reads, as the scheduler sets them for the step."""

    def __init__(self, req, dummy=False):
        self.py_request_id = self.request_id = req
        self.is_dummy = dummy
        self.py_prompt_len = self.prompt_len = 0 if dummy else PROMPT_LEN[req]
        self.prepopulated_prompt_len = 0
        self.context_current_position = 0
        self.context_chunk_size = 0
        self.known = self.py_prompt_len  # the tokens it holds: its prompt and what was sampled
        self.py_result = FakeResult()

    def get_tokens(self, beam=0):
        return [] if self.is_dummy else list(TOKENS[self.py_request_id][: self.known])

    def get_num_tokens(self, beam=0):
        return len(self.get_tokens(beam))

    @property
    def max_beam_num_tokens(self):
        return len(self.get_tokens(0))


def fake_model_engine():
    return types.SimpleNamespace(llm_args=types.SimpleNamespace(enable_return_routed_experts=True),
                                 mapping=types.SimpleNamespace(pp_size=1), is_spec_decode=False,
                                 max_num_tokens=MAX_NUM_TOKENS)


def forward(capture, step, request):
    """prepare, the MoE layers' captures with the routes of the step's rows, finish_forward."""
    context, generation, rows = [], [], []
    for req, begin, end in step["context"]:
        r = request(req)
        r.context_current_position, r.context_chunk_size = begin, end - begin
        r.known = max(PROMPT_LEN[req], end)
        context.append(r)
        rows += [(req, pos) for pos in range(begin, end)]
    for req, pos in step["generation"]:
        r = request(req)
        r.known = pos + 1
        generation.append(r)
        rows.append((req, pos))
    dummies = [FakeRequest(1_000_000 + i, dummy=True) for i in range(step["dummies"])]
    batch = types.SimpleNamespace(context_requests=context, generation_requests=generation + dummies)
    capture.prepare(batch, TOKENS_PER_BLOCK)
    routes = [route_of(req, pos, step["version"]) for req, pos in rows]
    for layer in range(LAYERS):
        experts = [route[layer] for route in routes] + [[PADDING_VALUE] * TOP_K for _ in dummies]
        capture.capture(layer, torch.tensor(experts, dtype=torch.int32).reshape(len(experts), TOP_K))
    capture.finish_forward()


def attach(capture, r):
    """attach_routes, then what the request's py_result holds: an outcome tuple (check_request)."""
    r.known = FINAL_LEN[r.py_request_id]
    try:
        capture.attach_routes(r)
    except Exception as e:
        return ("raised", f"attach_routes raised {type(e).__name__}: {e}")
    got = (r.py_result._additional_generation_outputs or {}).get("routed_experts") or []
    if not got:
        return ("none", None)
    return ("routes", torch.cat([torch.as_tensor(routes) for routes in got]).tolist())


def run_trace(capture):
    requests, outcomes = {}, {}

    def request(req):
        return requests.setdefault(req, FakeRequest(req))

    def stopped(why):
        for req in EXPECTED:
            outcomes.setdefault(req, ("unfinished", f"the serving run stopped at {why}"))
        return outcomes

    for s, step in enumerate(STEPS):
        STEP[0] = s
        for event in step["events"]:
            if event[0] == "hit":
                request(event[1]).prepopulated_prompt_len = event[2]
            elif event[0] == "preempt":  # the KV is evicted: the re-prefill computes it all again
                request(event[1]).prepopulated_prompt_len = 0
            elif event[0] == "reset_prefix_cache":
                capture.clear_shared()
        for req in step["attach_before"]:
            outcomes[req] = attach(capture, request(req))
            if outcomes[req][0] == "raised":
                return stopped(f"step {s} (attach_routes of request {req} raised)")
        if step["context"] or step["generation"]:
            try:
                forward(capture, step, request)
            except Exception as e:
                return stopped(f"step {s}: the forward raised {type(e).__name__}: {e}")
        for req in step["attach"]:
            outcomes[req] = attach(capture, request(req))
            if outcomes[req][0] == "raised":
                return stopped(f"step {s} (attach_routes of request {req} raised)")
    return outcomes


def serve(module, cls):
    """Every step of the trace on `cls`'s capture; what each finished request got."""
    with pytest.MonkeyPatch.context() as mp:
        fake_cuda(mp)
        attrs = {"moe_layers": {layer: None for layer in range(LAYERS)}}
        fake_model_registry(module, mp, attrs)
        mp.setattr(builtins, "_R3_ROUTE_CAPTURE_SINGLETON", None, raising=False)
        return run_trace(open_capture(cls, attrs))
)PY";

}  // namespace r3::trtllm
