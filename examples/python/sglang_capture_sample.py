"""Stands in for SGLang's routed-experts capture (python/sglang/srt/state_capturer/base.py and
routed_experts.py, the window helper of layers/dp_attention.py and the forward end of
model_executor/model_runner.py), written by r3fuzz from ../shared/spec/sglang-contract.md, not
copied. sglang_capture_adapter.py runs it unchanged under r3fuzz by swapping the module's
parallel-state getters and collective (the FAKES list there) for fakes built from a request.

Three versions, chosen at the forward end and by the class:
  upstream  RoutedExpertsCapturer, cuda_graph_batch = the decode runner's bs (requests)
  miles     RoutedExpertsCapturer, cuda_graph_batch = bs * captured_req_width (tokens)
  fixed     FixedRoutedExpertsCapturer: each call written at its rows' place in the rank's batch,
            the buffer sized for every tensor the engine hands it, the window [0, n), and under
            the overlap scheduler a clone for the deferred copy

For traces (r3fuzz export TRACE.json --pytest), from docs/lifecycle-contract.md 4.1 and 5: under the
overlap scheduler on_forward_end(..., no_copy_to_cpu=True) returns the window for a deferred copy
(upstream: a view of the device cache; fixed: a clone), and get_topk reads a finished request back
through req_to_token.
"""

try:  # the real engine environment would import SGLang's; the adapter swaps these names
    import torch
except ImportError:
    torch = None


def _unset(name):
    def getter(*args, **kwargs):
        raise RuntimeError(f"{name} is SGLang runtime state: run this module under sglang_capture_adapter.py")
    return getter


# Parallel state, schedule and collectives as SGLang's capturer looks them up at call time.
get_parallel = _unset("get_parallel")                # .dp_size, .attn_tp_size, .attn_tp_rank
get_schedule = _unset("get_schedule")                # .chunked_prefill_size
get_moe_a2a_backend = _unset("get_moe_a2a_backend")  # .is_deepep(), .is_none()
is_dp_attention_enabled = _unset("is_dp_attention_enabled")
get_attention_dp_rank = _unset("get_attention_dp_rank")
attn_tp_all_gather_into_tensor = _unset("attn_tp_all_gather_into_tensor")  # (output, input)
# The fix reads the layout of the call it captures: dp_local_start, dp_local_num_tokens (this DP
# rank's rows in a DP-gathered tensor) and batch_offset (a TBO child's first row in the batch).
get_capture_layout = _unset("get_capture_layout")


def dp_window(counts, rank, graph, graph_batch):
    """The contract's window rule (sglang-contract.md section 5): this DP rank's n = counts[rank]
    rows start at rank * graph_batch in a graph, else after the ranks before it. graph_batch is None
    before any decode replay; multiplying by it then raises TypeError, as the engine does."""
    offset = rank * graph_batch if graph else sum(counts[:rank])
    return offset, counts[rank]


def get_dp_local_slice_cpu(forward_batch, can_run_graph, cuda_graph_batch):
    """(start, n) of this DP rank, from the forward batch the window reads."""
    return dp_window(forward_batch.global_num_tokens_cpu, get_attention_dp_rank(), can_run_graph, cuda_graph_batch)


class DeviceCache:
    """[R, L, K + shared] int32: capture writes the whole tensor it is given at row 0."""

    def __init__(self, rows, num_layers, width):
        self.buffer = torch.zeros((rows, num_layers, width), dtype=torch.int32)

    def capture(self, layer_id, topk_ids):
        self.buffer[: topk_ids.shape[0], layer_id, :] = topk_ids


class HostCache:
    """[KV slots, L, K] int32 on the CPU: what a request reads its routing back from."""

    def __init__(self, num_tokens, num_layers, top_k):
        self.buffer = torch.zeros((num_tokens, num_layers, top_k), dtype=torch.int32)


class CaptureOutput:
    """What on_forward_end hands the overlap scheduler: the window and its KV slots. The scheduler
    copies them to host with its own copy primitive (map_device_tensors: a pinned non-blocking
    D2H on its copy stream) and calls finalize once the copy is done (contract section 5)."""

    def __init__(self, out_cache_loc, rows, host_cache):
        self.out_cache_loc, self.rows, self.host_cache = out_cache_loc, rows, host_cache

    def map_device_tensors(self, copy):
        self.out_cache_loc = copy(self.out_cache_loc)
        self.rows = copy(self.rows)

    def finalize(self):
        self.host_cache.buffer[self.out_cache_loc] = self.rows


class RoutedExpertsCapturer:
    def __init__(self, num_tokens, max_running_requests, num_layers, top_k, num_fused_shared_experts=0):
        self.top_k = top_k
        width = top_k + num_fused_shared_experts
        self.host_cache = HostCache(num_tokens, num_layers, top_k)
        self.device_cache = DeviceCache(self.buffer_rows(max_running_requests), num_layers, width)
        if get_moe_a2a_backend().is_deepep():
            # Sized by attn_tp only under DP attention; capture slices it by attn_tp_size always.
            attn_tp = get_parallel().attn_tp_size if is_dp_attention_enabled() else 1
            self.gather_buffer = torch.empty((self.device_cache.buffer.shape[0] * attn_tp, width), dtype=torch.int32)

    def buffer_rows(self, max_running_requests):
        # The contract, section 4: max(cps * dp, mrr * dp); spec decoding's verify tokens are not counted.
        dp = get_parallel().dp_size
        return max(get_schedule().chunked_prefill_size * dp, max_running_requests * dp)

    def _attn_tp_gathered(self, part):
        """Contract section 3: DeepEP's capturer first all-gathers the attn-TP slices into its
        preallocated buffer, so the whole padded batch of this DP rank is what gets written."""
        whole = self.gather_buffer.narrow(0, 0, part.shape[0] * get_parallel().attn_tp_size)
        attn_tp_all_gather_into_tensor(whole, part)
        return whole

    def capture(self, layer_id, topk_ids):
        written = self._attn_tp_gathered(topk_ids) if get_moe_a2a_backend().is_deepep() else topk_ids
        self.device_cache.capture(layer_id, written)

    def _window_rows(self, forward_batch, can_run_graph, cuda_graph_batch):
        """Contract section 5: the DP-rank window under DP attention for every backend but DeepEP
        (whose capture already put this rank's batch at row 0); [0, len(out_cache_loc)) otherwise."""
        if not is_dp_attention_enabled() or get_moe_a2a_backend().is_deepep():
            return 0, forward_batch.out_cache_loc.shape[0]
        start, n = get_dp_local_slice_cpu(forward_batch, can_run_graph, cuda_graph_batch)
        return start, start + n

    def _get_local_slice(self, forward_batch, can_run_graph, cuda_graph_batch):
        lo, hi = self._window_rows(forward_batch, can_run_graph, cuda_graph_batch)
        return self.device_cache.buffer[lo:hi, :, : self.top_k]

    def on_forward_end(self, forward_batch, can_run_graph, cuda_graph_batch, no_copy_to_cpu=False):
        window = self._get_local_slice(forward_batch, can_run_graph, cuda_graph_batch)
        if no_copy_to_cpu:
            # The overlap scheduler copies it later (contract section 5): the window is a view of
            # the device cache, which the next forward writes again.
            return CaptureOutput(forward_batch.out_cache_loc, self._deferred(window), self.host_cache)
        # Index assignment: as many rows as slots, or one row that broadcasts; else RuntimeError.
        self.host_cache.buffer[forward_batch.out_cache_loc] = window
        return None

    def _deferred(self, window):
        return window

    def get_topk(self, req_pool_idx, seqlen, req_to_token_pool, start_len=0):
        """Contract 4.1: a finished request's positions [start, seqlen - 1) map to KV slots through
        req_to_token, and those slots index the host cache."""
        start = min(max(start_len, 0), seqlen - 1)
        slots = req_to_token_pool.req_to_token[req_pool_idx][start: seqlen - 1].long()
        return self.host_cache.buffer[slots]


class FixedRoutedExpertsCapturer(RoutedExpertsCapturer):
    """The proposed fix (docs/FINDINGS.md): write each call's rows of this rank at their place in
    the rank's batch, gather every scattered backend's attn-TP slices, read [0, n) at the end."""

    def __init__(self, num_tokens, max_running_requests, num_layers, top_k, num_fused_shared_experts=0,
                 largest_batch=0):
        self._largest_batch = largest_batch
        super().__init__(num_tokens, max_running_requests, num_layers, top_k, num_fused_shared_experts)
        width = top_k + num_fused_shared_experts
        attn_tp = get_parallel().attn_tp_size
        self.gather_buffer = torch.empty((self.device_cache.buffer.shape[0] * attn_tp, width), dtype=torch.int32)

    def buffer_rows(self, max_running_requests):
        # dp times the largest aligned batch a rank runs (given by the runner: see largest_batch()).
        return self._largest_batch * get_parallel().dp_size

    def capture(self, layer_id, topk_ids):
        layout = get_capture_layout()
        scattered = get_moe_a2a_backend().is_deepep() or (
            not get_moe_a2a_backend().is_none() and get_parallel().attn_tp_size > 1)
        if scattered:
            topk_ids = self._attn_tp_gathered(topk_ids)
        elif is_dp_attention_enabled() and get_moe_a2a_backend().is_none():  # DP-gathered: this rank's rows
            start = layout.dp_local_start
            topk_ids = topk_ids[start: start + layout.dp_local_num_tokens]
        at = layout.batch_offset
        self.device_cache.buffer[at: at + topk_ids.shape[0], layer_id, :] = topk_ids

    def _get_local_slice(self, forward_batch, can_run_graph, cuda_graph_batch):
        return self.device_cache.buffer[: forward_batch.out_cache_loc.shape[0], :, : self.top_k]

    def _deferred(self, window):
        # The fix of obligation (a): the deferred copy reads a clone, not the buffer the next forward reuses.
        return window.clone()


def largest_batch(server_args, attn_tp, aligned):
    """The most rows one rank's batch holds: a prefill chunk (max_prefill_tokens without chunking),
    max_running_requests * w, the largest decode bucket * w, the largest prefill bucket; aligned
    to attn_tp where prepare_mlp_sync_batch aligns counts."""
    w = max(server_args.speculative_num_draft_tokens, 1)
    cps = server_args.chunked_prefill_size
    most = max(server_args.max_prefill_tokens if cps == -1 else cps, server_args.max_running_requests * w)
    if server_args.cuda_graph_bs:
        most = max(most, server_args.cuda_graph_bs[-1] * w)
    if server_args.prefill_cuda_graph_tokens:
        most = max(most, server_args.prefill_cuda_graph_tokens[-1])
    return (most + attn_tp - 1) // attn_tp * attn_tp if aligned else most


def cuda_graph_batch(runner, version):
    """model_runner.py, forward: what the window is given as cuda_graph_batch."""
    if version == "miles":  # tokens of a replay: bs * captured_req_width, None before any replay
        return runner.bs * runner.captured_req_width if getattr(runner, "bs", None) else None
    return getattr(runner, "bs", None)  # upstream: the request bucket of the last replay


def forward_end(capturer, forward_batch, can_run_graph, runner, version):
    """model_runner.py, forward, after the model ran: the capturer's forward end."""
    capturer.on_forward_end(forward_batch, can_run_graph, cuda_graph_batch(runner, version))
