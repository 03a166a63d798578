#include "gpu/detail/device_plan.hpp"

namespace r3::gpu::detail {
namespace {

// An empty table with the storage of a spare, when there is one.
template <class T>
std::vector<T> take_spare(std::vector<std::vector<T>>& spares) {
  if (spares.empty()) return {};
  std::vector<T> table = std::move(spares.back());
  spares.pop_back();
  table.clear();
  return table;
}

template <class T>
void keep_spares(std::vector<std::vector<T>>& tables, std::vector<std::vector<T>>& spares) {
  for (std::vector<T>& t : tables) spares.push_back(std::move(t));
  tables.clear();
}

template <class T>
std::vector<T>& wave_of(std::vector<std::vector<T>>& waves, size_t wave, std::vector<std::vector<T>>& spares) {
  while (waves.size() <= wave) waves.push_back(take_spare(spares));
  return waves[wave];
}

}  // namespace

GatherOp& DevicePlan::add_gather() {
  GatherOp& op = gathers.emplace_back();
  op.pieces = take_spare(spare_pieces);
  return op;
}

std::vector<ReplayJob>& DevicePlan::replay_wave(size_t wave) { return wave_of(replay_waves, wave, spare_replay_waves); }

std::vector<CaptureJob>& DevicePlan::capture_wave(size_t wave) {
  return wave_of(capture_waves, wave, spare_capture_waves);
}

void DevicePlan::clear() {
  arena32 = 0;
  arena16 = 0;
  buffers32.clear();
  buffers16.clear();
  materialize.clear();
  scan.keys.clear();
  scan.values.clear();
  for (GatherOp& op : gathers) spare_pieces.push_back(std::move(op.pieces));
  gathers.clear();
  keep_spares(replay_waves, spare_replay_waves);
  keep_spares(capture_waves, spare_capture_waves);
}

}  // namespace r3::gpu::detail
