"""The capture r3fuzz proposes for vllm-ascend (model ascend-fixed, reference/engines/ascend/policy.cpp,
docs/FINDINGS.md A1 to A5): it places the rows from what the forward context says (the comm type,
SP, the rank's own count), never from which count the tensor's length happens to equal:
- ALLGATHER: this DP rank's block of the DP-gathered tensor, at T * sum(ceil(n_e / T)) under SP
  (the unpadded SP shards), at d * max without it;
- every comm type that splits the batch across TP (MC2, FUSED_MC2, ALLTOALL) with T > 1: the TP
  all-gather, also with DP = 1, into equal slots under SP and tensor_split slots without;
- T = 1: the rank's own rows.
It raises on a layer past the buffer and on a count the buffer cannot hold."""
from sample_engines._ascend_base import MoECommType, tp_all_gather
from sample_engines._base import SampleCapturer, cdiv, get_forward_context, get_tp_group  # the last two replaced by the test

dist = _EXTRA_CTX = None  # torch.distributed and the forward context's extra part: replaced by the test


class RoutedExpertsCapturer(SampleCapturer):
    def capture(self, layer_id, topk_ids):
        layers, capacity = self.device_buffer.shape[1], self.device_buffer.shape[0]
        if not 0 <= layer_id < layers:
            raise IndexError(f"layer {layer_id} outside [0, {layers})")
        meta = get_forward_context().dp_metadata
        counts = [_EXTRA_CTX.capture_num_tokens] if meta is None else [int(c) for c in meta.num_tokens_across_dp_cpu.tolist()]
        d = 0 if meta is None else self.dp_rank
        tpd, T = counts[d], self.tp_size
        if tpd > capacity:
            raise AssertionError(f"rank runs {tpd} rows, the capture buffer holds {capacity}")
        sp = meta is not None and T > 1 and len(meta.local_sizes or ()) == len(counts) * T
        comm = _EXTRA_CTX.moe_comm_type
        if comm == MoECommType.ALLGATHER:
            start = sum(T * cdiv(c, T) if sp else max(counts) for c in counts[:d]) if meta is not None else 0
            rows = topk_ids[start:start + tpd]
        elif T == 1:
            rows = topk_ids[:tpd]
        else:
            n = topk_ids.shape[0]
            gathered_rows = n * T if sp or comm != MoECommType.ALLTOALL else max(tpd, T)
            rows = tp_all_gather(dist, get_tp_group(), topk_ids, gathered_rows, T)[:tpd]
        self.device_buffer[:tpd, layer_id, :] = rows
