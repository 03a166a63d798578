// SGLang's draw part (fuzz/generate/engine_draw.hpp): the forward of draw.hpp, instantiated for
// every source and for the seeded source, and SGLang's own fields read back for a replaying
// source (fuzz/generate/replay_source.hpp).
#include "fuzz/engines/sglang/draw.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "fuzz/engines/sglang/draw_fields.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

class Draw final : public EngineDraw {
 public:
  Case draw(Source& source, const CaseDomain& domain) const override {
    return detail::draw_sglang_case(source, domain);
  }
  Case draw(SeededSource& source, const CaseDomain& domain) const override {
    return detail::draw_sglang_case(source, domain);
  }

  std::span<const FieldInfo> own_fields() const override { return field::kInfos; }

  // The choice an SGLang case records for one of SGLang's fields (nullopt on another engine's
  // case, and for the bucket lists: recorded_list replays them whole).
  std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t index) const override {
    const Forward* forward = forward_of(c);
    if (!forward) return std::nullopt;
    const Forward& f = *forward;
    switch (field) {
      case field::dp_attention: return f.dp_attention;
      case field::a2a: return static_cast<int64_t>(f.a2a);
      case field::forward: return static_cast<int64_t>(f.kind);
      case field::spec_width: return f.spec_width;
      case field::max_running_requests: return f.max_running_requests;
      case field::chunked_prefill: return f.chunked_prefill_size != -1;
      case field::chunked_prefill_size: return f.chunked_prefill_size == -1 ? std::nullopt : std::optional(f.chunked_prefill_size);
      case field::requests:
        if (f.requests.empty()) return std::nullopt;
        return f.requests[std::min(index, f.requests.size() - 1)];
      case field::cuda_graph: return f.cuda_graph.has_value();
      case field::prefill_graph: return f.cuda_graph && !f.cuda_graph->prefill.empty();
      case field::last_decode_bucket: {
        if (!f.cuda_graph || !f.last_decode_bucket) return 0;
        const auto& d = f.cuda_graph->decode;
        return static_cast<int64_t>(std::find(d.begin(), d.end(), *f.last_decode_bucket) - d.begin()) + 1;
      }
      case field::tbo: return f.tbo;
      default: return std::nullopt;
    }
  }

  // The buckets: prefill as they are, decode in units of their alignment, as the draw asks.
  std::vector<int64_t> recorded_list(const Case& c, Field field) const override {
    const Forward* f = forward_of(c);
    if (!f || !f->cuda_graph) return {};
    if (field == field::prefill_buckets) return f->cuda_graph->prefill;
    std::vector<int64_t> units = f->cuda_graph->decode;
    const int64_t align = (f->tbo ? 2 : 1) * (counts_aligned(c) ? c.topology.tp : 1);
    for (int64_t& b : units) b /= align;
    return units;
  }
};

}  // namespace

const EngineDraw& draw_part() {
  static const Draw part;
  return part;
}

}  // namespace r3::sglang
