"""A sample of TensorRT-LLM's route capture (PR #18397, tensorrt_llm._torch.route_capture), written
from r3fuzz's lifecycle contract (docs/lifecycle-contract.md sections 4.3 and 5) and its findings
T1 to T7 (docs/FINDINGS.md, "TensorRT-LLM (PR #18397)"), not from the engine's code: the exported
trace tests (r3fuzz export TRACE.json --pytest) run on it in ./test.sh, the way they would run on
the real module.

It has the real module's static facade (create, get, capture, prepare, finish_forward,
clear_shared, attach_routes), which PyExecutor and the MoE layers call, and three versions:
  RouteCapture06a976ce  the contract's E (06a976ce): T1 to T7;
  RouteCapture          the later stored version L (aa94b01): assemble keeps the highest stored
                        position, a ring slot is committed before reuse, assemble's error reaches
                        the executor; T2 to T6 remain;
  FixedRouteCapture     every patch of r3fuzz's fixed model (trtllm-fixed).
Each version is a set of Behaviour flags named after the model's patches
(reference/engines/trtllm/lifecycle.cpp).
"""
import dataclasses
from typing import Dict, List, Optional, Tuple

import torch

RING_SLOTS = 3  # the pinned host ring of the copier (contract section 5)


@dataclasses.dataclass(frozen=True)
class Behaviour:
    store_follows_kv: bool = False     # a recompute or a new hit replaces stored rows (T4)
    decode_position: bool = False      # a generation row's position is the request's input position (T3)
    inclusive_range: bool = False      # assemble includes the highest stored position (T1)
    range_to_finish: bool = False      # assemble cuts at S - 1, and assembles a store whose top is 0 (T2)
    shared_cache_epoch: bool = False   # the cache takes only rows forwarded since the last reset (T5)
    cache_every_row: bool = False      # every forwarded row enters the cache, drained before a read-back (T6)
    commit_before_reuse: bool = False  # a ring slot's pending copy is committed before reuse (T7)
    raise_on_gap: bool = False         # assemble's error reaches the executor (else: no routes)


class Copier:
    """One copy to host per forward on a side stream, into a ring of pinned slots; drain commits the
    copies whose event has completed (all of them when forced)."""

    def __init__(self, b: Behaviour):
        self.b = b
        self.stream = torch.cuda.Stream()
        self.ring: List[Optional[torch.Tensor]] = [None] * RING_SLOTS
        self.events: List[Optional[object]] = [None] * RING_SLOTS
        self.pending: List[Tuple[int, list, int, object]] = []  # (slot, layout, rows, event)
        self.next_slot = 0
        self.last_event = None

    def wait_before_overwrite(self):
        # The next forward writes the device buffer again: it waits for the last copy's read.
        if self.last_event is not None:
            torch.cuda.current_stream().wait_event(self.last_event)

    def stage(self, device_rows: torch.Tensor, layout: list, commit):
        n = len(layout)
        if n == 0:
            return
        written = torch.cuda.Event()
        written.record(torch.cuda.current_stream())
        slot = self.next_slot
        if self.b.commit_before_reuse:
            self.drain(commit)
            if any(entry[0] == slot for entry in self.pending):
                self.events[slot].synchronize()
                self.drain(commit)
        elif self.events[slot] is not None and not self.events[slot].query():
            # E: waits for the slot's previous copy, but leaves its pending entry (T7).
            self.events[slot].synchronize()
        if self.ring[slot] is None or self.ring[slot].shape[0] < n or self.ring[slot].shape[1:] != device_rows.shape[1:]:
            self.ring[slot] = torch.zeros((max(n, device_rows.shape[0]),) + tuple(device_rows.shape[1:]),
                                          dtype=torch.int32)
        self.stream.wait_event(written)
        with torch.cuda.stream(self.stream):
            self.ring[slot][:n].copy_(device_rows[:n], non_blocking=True)
            done = torch.cuda.Event()
            done.record(self.stream)
        self.events[slot] = done
        self.last_event = done
        self.pending.append((slot, list(layout), n, done))
        self.next_slot = (slot + 1) % RING_SLOTS

    def drain(self, commit, force=False):
        kept = []
        for slot, layout, n, event in self.pending:
            if force:
                event.synchronize()
            if event.query():
                commit(self.ring[slot][:n], layout)
            else:
                kept.append((slot, layout, n, event))
        self.pending = kept


class _Capture:
    """The state of one capture: the store keyed by (request, absolute position), the decode
    counters, the shared route cache of prefixes, and the copier."""

    def __init__(self, b: Behaviour, model_engine):
        self.b = b
        self.max_rows = int(getattr(model_engine, "max_num_tokens", 0) or 8192)
        self.layer_rows: Dict[int, torch.Tensor] = {}  # layer id -> [max_rows, K] device rows
        self.copier: Optional[Copier] = None
        self.layout: Optional[list] = None  # this forward's (request, position, epoch) per row
        self.store: Dict[int, Dict[int, Tuple[torch.Tensor, int]]] = {}  # rid -> pos -> (row, epoch)
        self.decode_count: Dict[int, int] = {}
        self.tokens: Dict[int, list] = {}  # rid -> the tokens it held at its last forward
        self.prompt_len: Dict[int, int] = {}
        self.hit_read: set = set()  # requests whose hit is read back completely
        self.populated: set = set()
        self.cursor: Dict[int, int] = {}
        self.shared: Dict[tuple, torch.Tensor] = {}  # the token prefix -> its row
        self.epoch = 0  # reset_prefix_cache count
        self.had_context = False
        self.attached: set = set()

    # -- the forward ---------------------------------------------------------------------------
    def prepare(self, batch):
        if self.copier is not None:
            self.copier.wait_before_overwrite()
        layout, context = [], []
        self.had_context = False
        for req in batch.context_requests:
            begin, size = int(req.context_current_position), int(req.context_chunk_size)
            if req.is_dummy:
                layout += [(None, -1, self.epoch)] * size
                continue
            rid = req.py_request_id
            tokens = list(req.get_tokens(0))
            if self.b.store_follows_kv and rid in self.tokens and begin == int(req.prepopulated_prompt_len or 0):
                self.hit_read.discard(rid)  # a re-admission (after an eviction): its new hit is read back
            self.tokens[rid] = tokens
            self.prompt_len.setdefault(rid, int(req.py_prompt_len))
            self.decode_count.setdefault(rid, 0)
            layout += [(rid, begin + i, self.epoch) for i in range(size)]
            self.had_context = True
            context.append(req)
        for req in batch.generation_requests:
            if req.is_dummy:
                layout.append((None, -1, self.epoch))
                continue
            rid = req.py_request_id
            tokens = list(req.get_tokens(0))
            self.tokens[rid] = tokens
            if self.b.decode_position:
                pos = len(tokens) - 1
            else:
                pos = int(req.py_prompt_len) + self.decode_count.get(rid, 0)
            self.decode_count[rid] = self.decode_count.get(rid, 0) + 1
            layout.append((rid, pos, self.epoch))
        self.layout = layout
        if self.b.cache_every_row and context and self.copier is not None:
            self.copier.drain(self.commit, force=True)
        for req in context:
            self.read_back(req)

    def capture(self, layer_id, experts: torch.Tensor):
        rows = self.layer_rows.get(layer_id)
        if rows is None:
            rows = self.layer_rows[layer_id] = torch.zeros((self.max_rows, experts.shape[1]), dtype=torch.int32)
        n = min(experts.shape[0], self.max_rows)
        rows[:n] = experts[:n]

    def finish_forward(self):
        if self.layout is None or not self.layer_rows:
            self.layout = None
            return
        if self.copier is None:
            self.copier = Copier(self.b)
        device_rows = torch.stack([self.layer_rows[layer] for layer in sorted(self.layer_rows)], dim=1)
        self.copier.stage(device_rows, self.layout, self.commit)
        self.copier.drain(self.commit, force=self.had_context)
        if not self.b.cache_every_row:
            for rid in list(self.store):
                if rid not in self.populated and rid in self.prompt_len:
                    self.push_prompt(rid)
        self.layout = None

    # -- the store and the shared cache --------------------------------------------------------
    def commit(self, host_rows: torch.Tensor, layout: list):
        for row, (rid, pos, epoch) in zip(host_rows.to(torch.int16), layout):
            if rid is None:
                continue
            stored = self.store.setdefault(rid, {})
            if self.b.store_follows_kv or pos not in stored:
                stored[pos] = (row.clone(), epoch)
            tokens = self.tokens.get(rid, [])
            if self.b.cache_every_row and epoch == self.epoch and 0 <= pos < len(tokens):
                self.shared.setdefault(tuple(tokens[: pos + 1]), row.clone())

    def push_prompt(self, rid):
        """The request's stored prompt rows, from its cursor while contiguous, into the cache."""
        stored, tokens = self.store.get(rid, {}), self.tokens.get(rid, [])
        cursor, end = self.cursor.get(rid, 0), min(self.prompt_len[rid], len(tokens))
        while cursor < end and cursor in stored:
            row, epoch = stored[cursor]
            if not self.b.shared_cache_epoch or epoch == self.epoch:
                self.shared.setdefault(tuple(tokens[: cursor + 1]), row)
            cursor += 1
        self.cursor[rid] = cursor
        if cursor >= end:
            self.populated.add(rid)

    def read_back(self, req):
        """A prefix hit is not forwarded: its rows come from the cache, retried until complete."""
        rid = req.py_request_id
        hit = int(req.prepopulated_prompt_len or 0)
        if rid in self.hit_read:
            return
        if hit <= 0:
            self.hit_read.add(rid)
            return
        tokens = self.tokens[rid]
        limit = len(tokens) if self.b.cache_every_row else self.prompt_len[rid]
        stored = self.store.setdefault(rid, {})
        missing = 0
        for pos in range(min(hit, limit)):
            if pos in stored and not self.b.store_follows_kv:
                continue
            row = self.shared.get(tuple(tokens[: pos + 1]))
            if row is None:
                missing += 1
                continue
            stored[pos] = (row, self.epoch)
        if missing == 0:
            self.hit_read.add(rid)

    def clear_shared(self):
        self.shared.clear()
        self.hit_read.clear()
        self.populated.clear()
        self.cursor.clear()
        self.epoch += 1

    # -- the finish ----------------------------------------------------------------------------
    def assemble(self, rid, final_len):
        stored = self.store.get(rid, {})
        top = max(stored) if stored else -1
        if top <= 0 and not self.b.range_to_finish:
            return None
        keep = top + 1 if self.b.inclusive_range else top
        if self.b.range_to_finish:
            keep = min(keep, final_len - 1)
        rows = []
        for pos in range(keep):
            if pos not in stored:
                raise ValueError(f"request {rid} has no row at position {pos}, below its highest stored position {top}")
            rows.append(stored[pos][0])
        if not rows:
            top_k = next(iter(self.layer_rows.values())).shape[1] if self.layer_rows else 0
            return torch.zeros((0, len(self.layer_rows), top_k), dtype=torch.int16)
        return torch.stack(rows)

    def attach(self, request):
        rid = request.py_request_id
        if rid in self.attached:
            return
        if self.copier is not None:
            self.copier.drain(self.commit, force=True)
        try:
            routes = self.assemble(rid, len(request.get_tokens(0)))
        except ValueError:
            if self.b.raise_on_gap:
                raise
            return  # E: no routed_experts, the store kept
        if routes is None:
            return
        request.py_result.append_additional_generation_outputs("routed_experts", routes)
        self.attached.add(rid)
        if not self.b.cache_every_row and rid in self.prompt_len:
            self.push_prompt(rid)
        for table in (self.store, self.decode_count, self.tokens, self.prompt_len, self.cursor):
            table.pop(rid, None)
        self.populated.discard(rid)
        self.hit_read.discard(rid)


class _Facade:
    """The static facade the executor and the MoE layers call; one capture per class."""

    BEHAVIOUR = Behaviour()
    _instance: Optional[_Capture] = None

    @classmethod
    def create(cls, *, rank: int = 0, model_engine=None, enabled: Optional[bool] = None):
        if enabled is None:
            enabled = bool(getattr(getattr(model_engine, "llm_args", None), "enable_return_routed_experts", False))
        if enabled and model_engine is not None:
            pp = int(getattr(getattr(model_engine, "mapping", None), "pp_size", 1) or 1)
            if pp > 1 or getattr(model_engine, "is_spec_decode", False):
                raise RuntimeError("route capture is not supported with pipeline parallelism or speculative decoding")
        # A fresh capture per create (the sample is created once per test).
        cls._instance = _Capture(cls.BEHAVIOUR, model_engine) if enabled else None

    @classmethod
    def get(cls):
        return cls._instance

    @classmethod
    def capture(cls, layer_id, token_selected_experts):
        if cls._instance is not None:
            cls._instance.capture(int(layer_id), token_selected_experts)

    @classmethod
    def prepare(cls, scheduled_batch, tokens_per_block: int = 0):
        if cls._instance is not None:
            cls._instance.prepare(scheduled_batch)

    @classmethod
    def finish_forward(cls):
        if cls._instance is not None:
            cls._instance.finish_forward()

    @classmethod
    def clear_shared(cls):
        if cls._instance is not None:
            cls._instance.clear_shared()

    @classmethod
    def attach_routes(cls, request):
        if cls._instance is not None:
            cls._instance.attach(request)


class RouteCapture06a976ce(_Facade):
    BEHAVIOUR = Behaviour()
    _instance = None


class RouteCapture(_Facade):
    BEHAVIOUR = Behaviour(inclusive_range=True, commit_before_reuse=True, raise_on_gap=True)
    _instance = None


class FixedRouteCapture(_Facade):
    BEHAVIOUR = Behaviour(store_follows_kv=True, decode_position=True, inclusive_range=True, range_to_finish=True,
                          shared_cache_epoch=True, cache_every_row=True, commit_before_reuse=True, raise_on_gap=True)
    _instance = None
