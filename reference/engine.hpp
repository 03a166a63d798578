// Which engine a case belongs to, and which of its profiles a producer works under. Both are
// handles on the engine registry (reference/engines/registry.cpp): an engine is one inference
// engine's layout contract, an EngineModel (reference/engine_model.hpp), and r3fuzz's generic
// code reaches every engine through it without naming one (docs/ENGINES.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/error.hpp"

namespace r3 {

class EngineModel;

// A registered engine. The default handle is the registry's first engine, the one a case file
// without "engine" belongs to.
class Engine {
 public:
  constexpr Engine() = default;
  // The registered engine at `index` (registry order); index < engine_count().
  static Engine at(size_t index) { return Engine(static_cast<uint8_t>(index)); }
  // The handle of a registered model (by identity); the default engine when it is not registered.
  static Engine of(const EngineModel& model);

  size_t index() const { return index_; }
  const EngineModel& model() const;
  std::string_view name() const;
  bool operator==(const Engine&) const = default;

 private:
  explicit constexpr Engine(uint8_t index) : index_(index) {}
  uint8_t index_ = 0;
};

// The registered engines, in registry order.
size_t engine_count();
std::vector<Engine> all_engines();

std::string_view to_string(Engine engine);  // the engine's name
Result<Engine> parse_engine(std::string_view text);
// The names of every engine, "a, b" ("vllm, sglang" with the built-in engines).
std::string engine_names(std::string_view separator = ", ");

// Registers an engine after the built-in ones (a test's toy engine, an out-of-tree engine).
// The model must outlive every use of r3fuzz. An error when its name or a profile name is taken.
Status add_engine(const EngineModel& model);

// A profile (docs/layout-contract.md section 10): the part of the case space one engine
// version runs. Each engine registers its own; `any` is everything the case format allows, for
// every engine. Profiles are numbered densely (code()), the default engine's first, then any,
// then each further engine's in registry order: binary cases store the number.
class Profile {
 public:
  constexpr Profile() = default;  // the default profile: the default engine's first
  static Profile any();
  // The engine's `variant`-th profile (EngineModel::profiles() order).
  static Profile of(Engine engine, size_t variant);
  // The profile numbered `code`, when code < profile_count().
  static Profile at(size_t code) { return Profile(static_cast<uint8_t>(code)); }

  size_t code() const { return code_; }
  bool is_any() const;
  Engine engine() const;   // the engine it belongs to (the default engine for any)
  size_t variant() const;  // its place among its engine's profiles (0 for any)
  std::string_view name() const;
  bool operator==(const Profile&) const = default;

 private:
  explicit constexpr Profile(uint8_t code) : code_(code) {}
  uint8_t code_ = 0;
};

size_t profile_count();
std::vector<Profile> all_profiles();  // by code
std::string_view to_string(Profile profile);
Result<Profile> parse_profile(std::string_view text);
// Every profile's name, by code: "vllm, vllm-legacy, any, sglang, sglang-miles".
std::string profile_names(std::string_view separator = ", ");

inline constexpr Profile kDefaultProfile{};

}  // namespace r3
