"""vllm-ascend's patched capture() at main 182b75ea, written from docs/ascend-contract.md section 3:
which of six branches fires is decided by which count the tensor's length equals, in this order,
then device_buffer[0:tpd, layer] = the chosen rows (a layer past the buffer returns silently). Its
bugs are kept on purpose: with DP = 1 branch 1 writes the TP rank's share of an MC2 or ALLTOALL
split as if it were the batch (A1); T = 1 under MC2 matches no branch (A2); a count equal to
ceil(max/T) takes branch 3, skipping the gather (A3); branch 4's offset ignores SP shards (A4);
the ALLTOALL gather's slots ignore SP (A5)."""
from sample_engines._ascend_base import MoECommType, tp_all_gather
from sample_engines._base import SampleCapturer, cdiv, get_forward_context, get_tp_group  # the last two replaced by the test

dist = _EXTRA_CTX = None  # torch.distributed and the forward context's extra part: replaced by the test


class RoutedExpertsCapturer(SampleCapturer):
    def capture(self, layer_id, topk_ids):
        tpd, rows = self.branch_rows(topk_ids)
        if layer_id >= self.device_buffer.shape[1]:
            return  # the silent layer guard
        self.device_buffer[:tpd, layer_id, :] = rows

    def branch_rows(self, topk_ids):
        """(tpd, the rows to write) by the first of section 3's branches whose count matches."""
        n = topk_ids.shape[0]
        meta = get_forward_context().dp_metadata
        if meta is None:  # B1
            return n, topk_ids
        counts = [int(c) for c in meta.num_tokens_across_dp_cpu.tolist()]
        tpd, total, largest = counts[self.dp_rank], sum(counts), max(counts)
        padded_total = largest * len(counts)
        if n == total:  # B2
            end = sum(counts[:self.dp_rank + 1])
            return tpd, topk_ids[end - tpd:end]
        if n == tpd:  # B3
            return tpd, topk_ids[:tpd]
        if n == padded_total:  # B4
            start = self.dp_rank * largest
            return tpd, topk_ids[start:start + tpd]
        T = self.tp_size
        if T > 1 and n in (cdiv(tpd, T), tpd // T, cdiv(largest, T)):  # B5
            alltoall = _EXTRA_CTX.moe_comm_type == MoECommType.ALLTOALL
            gathered_rows = max(tpd, T) if alltoall else n * T
            return tpd, tp_all_gather(dist, get_tp_group(), topk_ids, gathered_rows, T)[:tpd]
        raise AssertionError(f"RoutedExpertsCapturer: unexpected topk_ids batch dim {n} (expected {total}, {tpd}, "
                             f"{padded_total}, or {cdiv(tpd, T)} for dp_rank={self.dp_rank}, tp_size={T})")
