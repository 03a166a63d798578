#include "reference/engines/ascend/fields.hpp"

#include <array>
#include <string>

namespace r3::ascend {
namespace {

constexpr std::array<std::string_view, kChipCount> kChips = {"a2", "a3", "a5", "310p"};
constexpr std::array<std::string_view, kCommCount> kComms = {"allgather", "mc2", "alltoall", "fused_mc2"};
constexpr std::array<std::string_view, kRunnerCount> kRunners = {"v1", "mrv2"};
constexpr std::array<std::string_view, kGraphCount> kGraphs = {"eager", "piecewise", "full_decode_only", "npugraph_ex"};

template <class E, size_t N>
Result<E> parse_of(std::string_view key, const std::array<std::string_view, N>& names, std::string_view text) {
  std::string allowed;
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
    allowed += (i ? ", " : "") + std::string(names[i]);
  }
  return Error{std::string(key) + ": \"" + std::string(text) + "\" is not one of " + allowed};
}

}  // namespace

std::string_view to_string(Chip chip) { return kChips[static_cast<size_t>(chip)]; }
std::string_view to_string(Comm comm) { return kComms[static_cast<size_t>(comm)]; }
std::string_view comm_type_member(Comm comm) {
  static constexpr std::array<std::string_view, kCommCount> kMembers = {"ALLGATHER", "MC2", "ALLTOALL", "FUSED_MC2"};
  return kMembers[static_cast<size_t>(comm)];
}
std::string_view to_string(Runner runner) { return kRunners[static_cast<size_t>(runner)]; }
std::string_view to_string(Graph graph) { return kGraphs[static_cast<size_t>(graph)]; }

Result<Chip> parse_chip(std::string_view text) { return parse_of<Chip>("ascend.chip", kChips, text); }
Result<Comm> parse_comm(std::string_view text) { return parse_of<Comm>("ascend.comm", kComms, text); }
Result<Runner> parse_runner(std::string_view text) { return parse_of<Runner>("ascend.runner", kRunners, text); }
Result<Graph> parse_graph(std::string_view text) { return parse_of<Graph>("ascend.graph", kGraphs, text); }

}  // namespace r3::ascend
