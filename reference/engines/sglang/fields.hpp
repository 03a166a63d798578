// Where an SGLang case keeps its forward and an SGLang step its forward layout: in the generic
// Case::engine_fields and Step::engine_step, which only SGLang's code reads back. Null for a
// case or step of another engine.
#pragma once

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/engines/sglang/forward.hpp"
#include "reference/engines/sglang/forward_layout.hpp"
#include "reference/layout.hpp"

namespace r3::sglang {

// The SGLang engine's handle in the registry (reference/engines/registry.cpp).
Engine engine();

inline const Forward* forward_of(const Case& c) { return c.engine_fields.get<Forward>(); }
inline Forward* forward_of(Case& c) { return c.engine_fields.get<Forward>(); }
inline const ForwardLayout* forward_of(const Step& s) { return s.engine_step.get<ForwardLayout>(); }
inline ForwardLayout* forward_of(Step& s) { return s.engine_step.get<ForwardLayout>(); }
inline const ForwardLayout* forward_of(const CaptureCall& call) {
  return call.engine_step ? call.engine_step->get<ForwardLayout>() : nullptr;
}

}  // namespace r3::sglang
