#include "fuzz/shrink/case_key.hpp"

#include "fuzz/shrink/engine_shrink.hpp"

namespace r3 {

std::string case_key(const Case& c) {
  CaseKey k;
  k.put(c.topology.dp), k.put(c.topology.tp), k.put(c.topology.ep), k.put(c.topology.sp);
  k.put(c.model.layers), k.put(c.model.top_k), k.put(c.model.experts), k.put(c.max_num_tokens);
  k.put_list(c.tokens);
  k.put(static_cast<int>(c.padding.mode));
  k.put_list(c.padding.cudagraph_sizes);
  k.put(c.idle_dummy);
  k.put(static_cast<int>(c.path)), k.put(c.monolithic), k.put(c.layer), k.put(c.microbatches), k.put(c.dp_chunk.value_or(-1));
  if (c.metadata) {
    k.mark('m');
    if (c.metadata->num_tokens_across_dp) k.put_list(*c.metadata->num_tokens_across_dp);
    k.mark(c.metadata->local_sizes_given ? 'g' : '-');
    if (c.metadata->local_sizes) k.put_list(*c.metadata->local_sizes);
  }
  if (const EngineShrink* part = engine_shrink(c.engine)) part->append_key(c, k);
  return std::move(k).take();
}

}  // namespace r3
