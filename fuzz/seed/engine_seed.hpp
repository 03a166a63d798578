// An engine's deployments (format "r3fuzz-deployment/1", docs/FUZZING.md "Seeding from
// production"): its knobs and traffic profile, read from the deployment's JSON into the
// engine's own fields (Deployment::fields), and the cases they seed. The generic seed code
// (seed.hpp) reads "engine", hands the document to that engine's part, and validates,
// deduplicates and writes what the part makes. Each engine's part lives in fuzz/engines/NAME/seed.cpp.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "fuzz/seed/traffic.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"

namespace r3 {

struct Deployment;  // fuzz/seed/seed.hpp

class EngineSeed {
 public:
  virtual ~EngineSeed() = default;

  // Reads `doc`, a deployment object of this engine, into `d`: the keys every deployment shares
  // through read_deployment_labels() or read_deployment_label(), its own into d.fields. Errors
  // name the field; every list and number is bounded, the traffic's size included (traffic.hpp).
  virtual Status read_deployment(const nlohmann::json& doc, Deployment& d) const = 0;
  // The deployment's base case: tokens all zero, the last layer, d.note as its note.
  virtual Case base_case(const Deployment& d) const = 0;
  // How many cases generate_traffic() makes, counted without making them.
  virtual TrafficSize traffic_size(const Deployment& d) const = 0;
  // The traffic's cases in order (d.note as their note), each handed to `emit` until it returns
  // false; none validated here (seed.hpp, for_each_traffic_case, does that).
  virtual void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) const = 0;
  // Why a metadata log cannot seed this engine's deployments (the text after "--log: "), or ""
  // when it can.
  virtual std::string_view log_refusal() const = 0;
  // The case one metadata-log line gives, the logged metadata as its override; an error says
  // what is wrong with the line (for_each_log_case puts "line N: " before it).
  virtual Result<Case> log_case(const Deployment& d, std::string_view line) const = 0;
};

// An engine whose deployments seed from their traffic only: a metadata log is refused with `why`.
class TrafficOnlySeed : public EngineSeed {
 public:
  explicit constexpr TrafficOnlySeed(std::string_view why) : why_(why) {}
  std::string_view log_refusal() const override { return why_; }
  Result<Case> log_case(const Deployment&, std::string_view) const override { return Error{std::string(why_)}; }

 private:
  std::string_view why_;
};

// The seed part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineSeed* engine_seed(Engine engine);

// What the parts read the keys every deployment shares with (defined in seed.cpp).
inline constexpr std::string_view kDeploymentFormat = "r3fuzz-deployment/1";
// "name" (a safe file-name stem) or "note" (bounded: it goes into every case) into `d`.
Status read_deployment_label(const std::string& key, const nlohmann::json& v, Deployment& d);
// "engine", "format" (required), "name" (required) and "note" of `doc` into `d`, before the rest.
Status read_deployment_labels(const nlohmann::json& doc, Deployment& d);

}  // namespace r3
