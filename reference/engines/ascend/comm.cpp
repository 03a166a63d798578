#include "reference/engines/ascend/comm.hpp"

#include <algorithm>

#include "reference/layout.hpp"

namespace r3::ascend {

int64_t mc2_capacity(const Case& c, const Fields& f) {
  const int64_t T = c.topology.tp;
  int64_t base = f.mc2_tokens;
  if (base <= 0) {
    base = c.padding.mode == PaddingMode::cudagraph && !c.padding.cudagraph_sizes.empty()
               ? c.padding.cudagraph_sizes.back()
               : c.max_num_tokens;
  }
  const int64_t limit = f.fused_mc2 && f.mega_moe ? 4096 : 512;
  return std::min(ceil_div(base, T), limit) * T;
}

Comm derive_comm(const Case& c, const Fields& f, int64_t largest) {
  const int64_t ep_size = static_cast<int64_t>(c.topology.dp) * c.topology.tp;
  if (!c.topology.ep || ep_size == 1) return Comm::allgather;
  if (f.lora) return Comm::alltoall;
  const bool fits = largest <= mc2_capacity(c, f);
  switch (f.chip) {
    case Chip::a2:  // _select_a2_moe_comm_method: experts per device <= 24 and EP >= 16
      return c.model.experts / ep_size <= 24 && ep_size >= 16 && fits ? Comm::mc2 : Comm::allgather;
    case Chip::a3:  // _select_a3_moe_comm_method: fused MC2 while the EP group is small enough
      if (f.fused_mc2 && ep_size <= (f.mega_moe ? 64 : 32)) return Comm::fused_mc2;
      return fits ? Comm::mc2 : Comm::alltoall;
    case Chip::a5:  // _select_a5_moe_comm_method: world = world_size_across_dp
      if (fits && ep_size > 1) return Comm::mc2;
      return ep_size <= c.model.top_k ? Comm::allgather : Comm::alltoall;
    case Chip::p310: return Comm::allgather;
  }
  return Comm::allgather;
}

}  // namespace r3::ascend
