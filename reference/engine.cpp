// The engine registry: the built-in models (reference/engines/registry.cpp) and those added at
// run time, and the dense profile numbering derived from them.
#include "reference/engine.hpp"


#include "reference/engine_model.hpp"

namespace r3 {

// reference/engines/registry.cpp: the built-in engines, the default first.
std::vector<const EngineModel*> builtin_engine_models();

namespace {

struct ProfileEntry {
  Engine engine;
  size_t variant = 0;
  bool any = false;
  std::string_view name;
};

struct Registry {
  std::vector<const EngineModel*> models;
  std::vector<ProfileEntry> profiles;  // by code

  void add_profiles(size_t engine_index) {
    const EngineModel& m = *models[engine_index];
    for (size_t v = 0; v < m.profiles().size(); ++v)
      profiles.push_back({Engine::at(engine_index), v, false, m.profiles()[v].name});
    // `any` follows the default engine's profiles, where binary cases have always numbered it.
    if (engine_index == 0) profiles.push_back({Engine::at(0), 0, true, "any"});
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry built;
    built.models = builtin_engine_models();
    for (size_t i = 0; i < built.models.size(); ++i) built.add_profiles(i);
    return built;
  }();
  return r;
}

const ProfileEntry& entry(Profile p) { return registry().profiles.at(p.code()); }

std::string joined(const std::vector<std::string_view>& names, std::string_view separator) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : std::string(separator)) + std::string(n);
  return out;
}

}  // namespace

std::span<const EngineModel* const> engine_models() { return registry().models; }

Engine Engine::of(const EngineModel& model) {
  const auto& models = registry().models;
  for (size_t i = 0; i < models.size(); ++i)
    if (models[i] == &model) return Engine::at(i);
  return Engine{};
}

const EngineModel& Engine::model() const { return *registry().models.at(index_); }
std::string_view Engine::name() const { return model().name(); }

size_t engine_count() { return registry().models.size(); }

std::vector<Engine> all_engines() {
  std::vector<Engine> out;
  for (size_t i = 0; i < engine_count(); ++i) out.push_back(Engine::at(i));
  return out;
}

std::string_view to_string(Engine engine) { return engine.name(); }

std::string engine_names(std::string_view separator) {
  std::vector<std::string_view> names;
  for (Engine e : all_engines()) names.push_back(e.name());
  return joined(names, separator);
}

Result<Engine> parse_engine(std::string_view text) {
  for (Engine e : all_engines())
    if (text == e.name()) return e;
  return Error{"engine: \"" + std::string(text) + "\" is not one of " + engine_names()};
}

Status add_engine(const EngineModel& model) {
  Registry& r = registry();
  if (r.models.size() >= 255) return Error{"engine " + std::string(model.name()) + ": too many engines"};
  if (parse_engine(model.name())) return Error{"engine " + std::string(model.name()) + ": the name is taken"};
  for (const ProfileInfo& p : model.profiles())
    if (parse_profile(p.name)) return Error{"engine " + std::string(model.name()) + ": profile " + std::string(p.name) + " is taken"};
  if (r.profiles.size() + model.profiles().size() > 255) return Error{"engine " + std::string(model.name()) + ": too many profiles"};
  r.models.push_back(&model);
  r.add_profiles(r.models.size() - 1);
  return ok_status();
}

Profile Profile::any() {
  const auto& profiles = registry().profiles;
  for (size_t code = 0; code < profiles.size(); ++code)
    if (profiles[code].any) return Profile::at(code);
  return Profile{};
}

Profile Profile::of(Engine engine, size_t variant) {
  const auto& profiles = registry().profiles;
  for (size_t code = 0; code < profiles.size(); ++code)
    if (!profiles[code].any && profiles[code].engine == engine && profiles[code].variant == variant) return Profile::at(code);
  return Profile{};
}

bool Profile::is_any() const { return entry(*this).any; }
Engine Profile::engine() const { return entry(*this).engine; }
size_t Profile::variant() const { return entry(*this).variant; }
std::string_view Profile::name() const { return entry(*this).name; }

size_t profile_count() { return registry().profiles.size(); }

std::vector<Profile> all_profiles() {
  std::vector<Profile> out;
  for (size_t code = 0; code < profile_count(); ++code) out.push_back(Profile::at(code));
  return out;
}

std::string_view to_string(Profile profile) { return profile.name(); }

std::string profile_names(std::string_view separator) {
  std::vector<std::string_view> names;
  for (Profile p : all_profiles()) names.push_back(p.name());
  return joined(names, separator);
}

Result<Profile> parse_profile(std::string_view text) {
  for (Profile p : all_profiles())
    if (text == p.name()) return p;
  return Error{"profile: \"" + std::string(text) + "\" is not one of " + profile_names()};
}

}  // namespace r3
