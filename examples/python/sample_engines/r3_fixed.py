"""The capture r3fuzz proposes (policy r3-fixed, reference/policy_r3_fixed.cpp, docs/FINDINGS.md):
1. each call writes its rows at its own offset in the step (the micro-batch's first token, the DP
   chunk's first row), read from the forward context as capture_row_offset / capture_chunk_size;
2. it tells an SP shard from a whole batch by the shape of local_sizes (D*T entries: SP), never
   by the row count, so a one-row shard is always all-gathered;
3. it checks the metadata against itself before slicing, and every write against the buffer."""
from sample_engines._base import SampleCapturer, cdiv, get_forward_context, get_tp_group  # the last two replaced by the test


class RoutedExpertsCapturer(SampleCapturer):
    def capture(self, layer_id, topk_ids):
        layers = self.device_buffer.shape[1]
        if not 0 <= layer_id < layers:
            raise IndexError(f"layer {layer_id} outside [0, {layers})")
        ctx = get_forward_context()
        offset = getattr(ctx, "capture_row_offset", 0) or 0
        chunk = getattr(ctx, "capture_chunk_size", None)
        meta = ctx.dp_metadata
        if meta is None:
            return self.write(layer_id, offset, topk_ids)
        across = [int(x) for x in meta.num_tokens_across_dp_cpu.tolist()]
        sizes = meta.local_sizes
        per_rank = self.check_metadata(across, sizes, chunk, offset)
        if chunk:
            return self.capture_chunk(layer_id, topk_ids, across, per_rank > 1, chunk, offset)
        return self.capture_batch(layer_id, topk_ids, across, sizes, per_rank, offset)

    def check_metadata(self, across, sizes, chunk, offset):
        """Shards per DP rank in local_sizes (1, or tp_size with SP), after checking it against num_tokens_across_dp."""
        if len(across) < 2:
            raise AssertionError("DP metadata on a step with dp_size 1 (a single DP rank has none)")
        if sizes is None:
            raise AssertionError("local_sizes unset on a step with DP metadata")
        per_rank = 1 if len(sizes) == len(across) else self.tp_size if len(sizes) == len(across) * self.tp_size else 0
        if per_rank == 0:
            raise AssertionError(f"local_sizes has {len(sizes)} entries, expected dp_size {len(across)} or "
                                 f"dp_size*tp_size {len(across) * self.tp_size}")
        for i, n in enumerate(across):
            want = cdiv(n, per_rank)
            if chunk:
                want = min(chunk, want - offset)
                want = 1 if want <= 0 else want
            for k in range(per_rank):
                if sizes[i * per_rank + k] != want:
                    raise AssertionError(f"local_sizes[{i * per_rank + k}] = {sizes[i * per_rank + k]} disagrees with "
                                         f"num_tokens_across_dp[{i}] = {n} (expected {want})")
        return per_rank

    def capture_batch(self, layer_id, topk_ids, across, sizes, per_rank, offset):
        """A whole step or one micro-batch: this call carries tokens [offset, offset + n_d) of the rank."""
        n, n_d = topk_ids.shape[0], across[self.dp_rank]
        if n == sum(sizes):
            start = sum(sizes[:self.dp_rank * per_rank])
            return self.write(layer_id, offset, topk_ids[start:start + n_d])
        if per_rank > 1 and n == cdiv(n_d, self.tp_size):
            return self.write(layer_id, offset, get_tp_group().all_gather(topk_ids, dim=0)[:n_d])
        if per_rank == 1 and n == n_d:
            return self.write(layer_id, offset, topk_ids[:n_d])
        shard = f"{cdiv(n_d, self.tp_size)} (this TP rank's SP shard)" if per_rank > 1 else f"{n_d} (this DP rank)"
        raise AssertionError(f"routed experts have {n} rows; expected {sum(sizes)} (gathered) or {shard}")

    def capture_chunk(self, layer_id, topk_ids, across, sp, chunk, lo):
        """DP chunk at row lo of each TP rank's rows; a finished rank reruns its last row (written already)."""
        n, n_d = topk_ids.shape[0], across[self.dp_rank]
        per_tp = cdiv(n_d, self.tp_size) if sp else n_d
        if lo >= per_tp:
            rerun = 1 if per_tp > 0 else 0
            if n != rerun:
                raise AssertionError(f"a finished rank sends {rerun} row{'' if rerun == 1 else 's'}, got {n}")
            return
        rows = min(chunk, per_tp - lo)
        if n != rows:
            raise AssertionError(f"DP chunk at row {lo} has {n} rows, expected {rows}")
        if not sp:
            return self.write(layer_id, lo, topk_ids[:rows])
        gathered = get_tp_group().all_gather(topk_ids, dim=0)  # each TP rank's chunk in turn
        for t in range(self.tp_size):
            first = t * per_tp + lo
            tokens = max(0, min(n_d - first, rows))
            if tokens > 0:
                self.write(layer_id, first, gathered[t * rows:t * rows + tokens])

    def write(self, layer_id, dst, rows):
        if dst + rows.shape[0] > self.device_buffer.shape[0]:
            raise IndexError(f"capture buffer holds {self.device_buffer.shape[0]} rows, rows [{dst}, "
                             f"{dst + rows.shape[0]}) to write")
        self.device_buffer[dst:dst + rows.shape[0], layer_id, :] = rows
