"""Stands in for vLLM main's AuxOutput connector (vllm/distributed/aux_output_connector/:
connector.py's AuxOutputSchedulerConnector, worker.py's AuxOutputWorkerConnector and store.py's
BlockObjectStore), written by r3fuzz from docs/lifecycle-contract.md section 2.3, not copied.
`r3fuzz export TRACE.json --pytest` drives it through a trace, as it drives vLLM's own classes.

Two versions, chosen by the class (each worker class names its scheduler connector):
  AuxOutputWorkerConnector       vLLM main as read: route blocks keyed by (generation, block hash);
                                 a resumed request emits from num_tokens - 1; the store holds one
                                 object per KV block while requests retain every block they were sent
  FixedAuxOutputWorkerConnector  the proposed fixes (docs/FINDINGS.md L7, L8, L10): a block keyed
                                 by the weight versions of its KV too, a resumed request emitting
                                 again from its prompt start, a store sized for what is retained
"""

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np


def _unset(name):
    def getter(*args, **kwargs):
        raise RuntimeError(f"{name} is vLLM runtime state: run this module under r3fuzz's exported trace test")
    return getter


# What the worker's module looks up when it is built (the exported test swaps these).
RoutedExpertsCapturer = _unset("RoutedExpertsCapturer")
bind_routed_experts_capturer = _unset("bind_routed_experts_capturer")
get_tp_group = _unset("get_tp_group")
resolve_kv_cache_block_sizes = _unset("resolve_kv_cache_block_sizes")


class BlockObjectStoreError(RuntimeError):
    pass


@dataclass
class AuxOutputConnectorMetadata:
    generation: int
    requests: dict          # request id -> emit start
    block_hashes: dict      # request id -> the block hashes not sent before
    finished_requests: tuple
    block_versions: dict = field(default_factory=dict)  # the fix: request id -> KV versions of held blocks


@dataclass
class AuxOutputRequestOutput:
    token_start: int
    rows: np.ndarray


class AuxOutputSchedulerConnector:
    """Contract V1, V3, V4, V5: which hashes, emit starts and terminal events each step sends."""

    def __init__(self):
        self._sent = {}       # request id -> hashes sent
        self._finished = {}   # request id -> final hashes not sent, delivered with the next metadata
        self._generation = 0

    def _emit_start(self, request):
        has_output = request.num_output_tokens > 0
        return max(request.sampling_params.routed_experts_prompt_start, request.num_tokens - 1 if has_output else 0)

    def build_connector_meta(self, scheduler_output, requests):
        scheduled, hashes = {}, {}
        for request_id in scheduler_output.num_scheduled_tokens:
            request = requests[request_id]
            sent = self._sent.setdefault(request_id, 0)
            if len(request.block_hashes) > sent:
                hashes[request_id] = list(request.block_hashes[sent:])
            self._sent[request_id] = len(request.block_hashes)
            scheduled[request_id] = self._emit_start(request)
        for request_id, sent in self._sent.items():  # a hash-only update for the others
            if request_id not in scheduled and len(requests[request_id].block_hashes) > sent:
                hashes[request_id] = list(requests[request_id].block_hashes[sent:])
                self._sent[request_id] = len(requests[request_id].block_hashes)
        hashes.update((request_id, new) for request_id, new in self._finished.items() if new)
        finished = tuple(self._finished)
        self._finished = {}
        meta = AuxOutputConnectorMetadata(self._generation, scheduled, hashes, finished)
        self._add_versions(meta, scheduler_output, requests)
        return meta

    def _add_versions(self, meta, scheduler_output, requests):
        pass

    def take_output(self, request, output):
        """The rows up to num_tokens - 1 (V5)."""
        got = output[request.request_id]
        local_end = request.num_tokens - 1 - got.token_start
        if local_end <= 0:
            assert not request.is_finished(), "a finished request has no accepted token range"
            return None
        return got.rows[:local_end]

    def request_finished(self, request):
        sent = self._sent.pop(request.request_id, None)
        if sent is not None:
            self._finished[request.request_id] = list(request.block_hashes[sent:])

    def reset(self):
        self._sent.clear()
        self._finished.clear()
        self._generation += 1


class BlockStore:
    """Contract V2, V6: immutable objects under keys; of a put's objects under one key the last
    counts, an object already stored stays; keys a request retains are never evicted, the others
    go least recently used first; a put that cannot fit fails closed. `slots` None: unbounded."""

    def __init__(self, slots):
        self.slots = slots
        self.objects = OrderedDict()  # key -> object, least recently used first
        self.references = {}

    def put(self, objects, retain=(), release=()):
        batch = {}
        for key, rows in objects:
            batch[key] = rows
        for key in retain:
            self.references[key] = self.references.get(key, 0) + 1
        released = []
        for key in release:
            self.references[key] -= 1
            if not self.references[key]:
                del self.references[key]
                released.append(key)
        for key in released:  # a key no request holds any more is the most recently used
            if key in self.objects:
                self.objects.move_to_end(key)
        new = [key for key in batch if key not in self.objects]
        if self.slots is not None:
            excess = len(self.objects) + len(new) - self.slots
            victims = [key for key in self.objects if key not in self.references and key not in batch][:max(excess, 0)]
            if len(victims) < excess:
                raise BlockObjectStoreError(f"the store cannot retain the batch: limit={self.slots} objects")
            for key in victims:
                del self.objects[key]
        for key in batch:
            if key not in self.objects:
                self.objects[key] = batch[key]
            self.objects.move_to_end(key)

    def get(self, keys):
        missing = [key for key in keys if key not in self.objects]
        if missing:
            raise BlockObjectStoreError(f"a routed-experts object is not in the store (limit={self.slots} objects)")
        for key in keys:
            self.objects.move_to_end(key)
        return [self.objects[key] for key in keys]


@dataclass
class _State:
    emit_cursor: int
    keys: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)      # position -> row
    versions: dict = field(default_factory=dict)  # position -> weight version of its row
    pending: list = field(default_factory=list)   # completed blocks awaiting their key
    capture_cursor: int = None


@dataclass
class PendingAuxOutput:
    token_starts: np.ndarray
    query_start_loc: np.ndarray
    routed_experts: object

    def complete(self):
        pass


class AuxOutputWorkerConnector:
    """Contract V1, V2, V4, V6: capture into each request's tail, publish full blocks under their
    keys, emit from the step's rows or from the store."""

    scheduler_connector_class = AuxOutputSchedulerConnector

    def __init__(self, *, vllm_config, model, kv_cache_config, max_num_batched_tokens):
        self._capturer = RoutedExpertsCapturer(max_num_batched_tokens=max_num_batched_tokens, vllm_config=vllm_config)
        bind_routed_experts_capturer(model, self._capturer)
        assert get_tp_group().is_first_rank, "r3fuzz's sample is the output rank's worker"
        block, self.block_size = resolve_kv_cache_block_sizes(kv_cache_config, vllm_config)
        self.store = BlockStore(self._store_slots(kv_cache_config.num_blocks * (block // self.block_size)))
        self.states = {}
        self.generation = 0
        self.weight_version = 0

    def _store_slots(self, blocks):
        return blocks  # one object per KV block when max_bytes is unset

    def _key(self, state, block, versions):
        return state.keys[block]

    def _read_key(self, request_id, state, block):
        return state.keys[block]

    def begin_step(self, meta):
        if meta is None:
            return
        assert not set(meta.requests) & set(meta.finished_requests), "a request cannot run and finish in one step"
        release = []
        if meta.generation > self.generation:
            release = [key for state in self.states.values() for key in reversed(state.keys)]
            self.states.clear()
            self.generation = meta.generation
        for request_id, emit_start in meta.requests.items():
            state = self.states.setdefault(request_id, _State(emit_start))
            assert emit_start <= state.emit_cursor, "the scheduler's emit start moved ahead of the worker's"
        self._remember_versions(meta)
        retain, batch = [], []
        for request_id, hashes in meta.block_hashes.items():
            state = self.states[request_id]
            keys = [f"{self.generation}/{h.hex()}" for h in hashes]
            state.keys += keys
            retain += keys
            batch.append(state)
        for request_id in meta.finished_requests:
            release += list(reversed(self.states[request_id].keys))
        self._publish(batch, retain, release)
        for request_id in meta.finished_requests:
            del self.states[request_id]

    def _remember_versions(self, meta):
        pass

    def _publish(self, states, retain=(), release=()):
        objects = []
        for state in states:
            ready = [b for b in state.pending if b < len(state.keys)]
            state.pending = [b for b in state.pending if b >= len(state.keys)]
            for b in ready:
                positions = range(b * self.block_size, (b + 1) * self.block_size)
                rows = np.stack([state.rows[p] for p in positions])
                objects.append((self._key(state, b, tuple(state.versions[p] for p in positions)), rows))
        if objects or retain or release:
            self.store.put(objects, retain, release)

    def prepare_output(self, request_ids, token_starts, query_start_loc):
        rows = int(query_start_loc[len(request_ids)])
        return PendingAuxOutput(token_starts, query_start_loc, self._capturer.snapshot_routing_data(rows))

    def process_output(self, request_ids, token_starts, query_start_loc, routed_experts, num_sampled, num_rejected):
        outputs, reads, touched = {}, [], []
        for i, request_id in enumerate(request_ids):
            state = self.states[request_id]
            start, end = int(query_start_loc[i]), int(query_start_loc[i + 1]) - int(num_rejected[i])
            capture_start = int(token_starts[i])
            if state.capture_cursor is not None:
                assert capture_start >= state.capture_cursor, "capture moved backwards"
                capture_start = min(capture_start, state.capture_cursor)
            emit_start = state.emit_cursor
            for j in range(end - start):
                state.rows[capture_start + j] = np.asarray(routed_experts[start + j])
                state.versions[capture_start + j] = self.weight_version
            token_end = capture_start + end - start
            for b in range(capture_start // self.block_size, token_end // self.block_size):
                if b not in state.pending and all(p in state.rows for p in range(b * self.block_size,
                                                                                  (b + 1) * self.block_size)):
                    state.pending.append(b)
            state.capture_cursor = token_end
            touched.append(state)
            if num_sampled[i] > 0 and emit_start < token_end:
                if emit_start >= capture_start:
                    outputs[request_id] = AuxOutputRequestOutput(emit_start, routed_experts[start + emit_start - capture_start:end])
                    state.emit_cursor = token_end
                else:
                    reads.append((request_id, emit_start, token_end))
        self._publish(touched)  # the whole batch before any read
        for request_id, emit_start, token_end in reads:
            state = self.states[request_id]
            stored_end = min(token_end // self.block_size, len(state.keys)) * self.block_size
            rows = []
            if emit_start < stored_end:
                first = emit_start // self.block_size
                keys = [self._read_key(request_id, state, b) for b in range(first, stored_end // self.block_size)]
                blocks = self.store.get(keys)
                rows = list(np.concatenate(blocks))[emit_start - first * self.block_size:]
            rows += [state.rows.get(p, np.zeros_like(routed_experts[0])) for p in range(max(emit_start, stored_end), token_end)]
            outputs[request_id] = AuxOutputRequestOutput(emit_start, np.stack(rows))
            state.emit_cursor = token_end
        return outputs

    def close(self):
        pass


class FixedAuxOutputSchedulerConnector(AuxOutputSchedulerConnector):
    """L8: a request resumed after a preemption emits again from its prompt start. L7: the
    metadata carries the weight versions of the KV blocks each scheduled request holds."""

    def __init__(self):
        super().__init__()
        self._preempted = {}  # request id -> num_tokens at its preemption

    def request_finished(self, request):
        if not request.is_finished():
            self._preempted[request.request_id] = request.num_tokens
        super().request_finished(request)

    def _emit_start(self, request):
        # The prompt start until the resumed request samples again (its emission starts there).
        if self._preempted.get(request.request_id) == request.num_tokens:
            return request.sampling_params.routed_experts_prompt_start
        self._preempted.pop(request.request_id, None)
        return super()._emit_start(request)

    def _add_versions(self, meta, scheduler_output, requests):
        for request_id in scheduler_output.num_scheduled_tokens:
            meta.block_versions[request_id] = list(requests[request_id].kv_block_versions)


class FixedAuxOutputWorkerConnector(AuxOutputWorkerConnector):
    """L7: a block's key names the weight versions of its rows, and a read asks for the versions of
    the KV the request holds there. L10: the store holds every object it is handed."""

    scheduler_connector_class = FixedAuxOutputSchedulerConnector

    def _store_slots(self, blocks):
        return None

    def set_weight_version(self, version):
        self.weight_version = version

    def _remember_versions(self, meta):
        self._held = dict(meta.block_versions)

    def _key(self, state, block, versions):
        return f"{state.keys[block]}/{versions}"

    def _read_key(self, request_id, state, block):
        held = self._held.get(request_id, [])
        versions = held[block] if block < len(held) else tuple(
            state.versions[p] for p in range(block * self.block_size, (block + 1) * self.block_size))
        return f"{state.keys[block]}/{versions}"
