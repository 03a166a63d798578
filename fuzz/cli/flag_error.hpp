// The registry's errors name the flag it usually serves ("--impl NAME: unknown
// implementation; ..."); a command that took NAME from another flag says that flag instead,
// so the user is pointed at what they typed.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "reference/error.hpp"

namespace r3 {

// "--impl nope: ..." as "--against nope: ..."; other messages get "--against: " in front.
inline Error as_flag_error(Error e, std::string_view flag) {
  constexpr std::string_view impl = "--impl ";
  if (std::string_view(e.message).starts_with(impl)) {
    e.message = std::string(flag) + " " + e.message.substr(impl.size());
  } else {
    e.message = std::string(flag) + ": " + e.message;
  }
  return e;
}

}  // namespace r3
