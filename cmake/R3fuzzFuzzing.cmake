# R3FUZZ_FUZZING: an explicit clang libFuzzer + ASan + UBSan mode, so it fails
# fast when the compiler cannot do it. Adds sanitizer flags and
# -fsanitize=fuzzer-no-link (coverage for libraries) to CMAKE_CXX_FLAGS, and
# defines r3fuzz_fuzzer_engine, which fuzz target executables link to get
# libFuzzer's main (-fsanitize=fuzzer). Outside fuzzing mode
# r3fuzz_fuzzer_engine is empty, so fuzz targets need their own main() there.

add_library(r3fuzz_fuzzer_engine INTERFACE)
add_library(r3fuzz::fuzzer_engine ALIAS r3fuzz_fuzzer_engine)
target_link_libraries(r3fuzz_fuzzer_engine INTERFACE r3fuzz_options)

if(NOT R3FUZZ_FUZZING)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "r3fuzz: R3FUZZ_FUZZING=ON needs clang (libFuzzer), but the C++ compiler is "
                      "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Use the 'fuzz' preset or "
                      "-DCMAKE_CXX_COMPILER=clang++ in a fresh build folder.")
endif()

set(_r3fuzz_sanitize -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)

include(CheckCXXSourceCompiles)
include(CMakePushCheckState)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_QUIET ON)
set(CMAKE_REQUIRED_FLAGS "${_r3fuzz_sanitize}")
list(JOIN CMAKE_REQUIRED_FLAGS " " CMAKE_REQUIRED_FLAGS)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer ${_r3fuzz_sanitize})
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
]] R3FUZZ_HAVE_LIBFUZZER)
cmake_pop_check_state()
if(NOT R3FUZZ_HAVE_LIBFUZZER)
  message(FATAL_ERROR "r3fuzz: R3FUZZ_FUZZING=ON but ${CMAKE_CXX_COMPILER} cannot link "
                      "-fsanitize=fuzzer,address,undefined. On Debian 12 install libclang-rt-14-dev "
                      "(run ./setup.sh). See CMakeFiles/CMakeError.log for the compiler output.")
endif()

message(STATUS "r3fuzz: fuzzing mode: libFuzzer + ASan + UBSan")
# The sanitizer flags go into CMAKE_CXX_FLAGS, where an OSS-Fuzz builder puts its own (CXXFLAGS),
# not into r3fuzz_options: a compile line of this build is then exactly the line
# .clusterfuzzlite/build.sh makes when given R3FUZZ_FUZZING_BUILDER_CXXFLAGS, so the
# ClusterFuzzLite build check (label cflite) takes its objects from the compiler cache instead of
# building the library a third time. Line tables are all a sanitizer report needs to name
# file:line, at a fraction of -g's cost. The tests' R3FUZZ_FUZZING define is theirs
# (tests/CMakeLists.txt): the library compiles the same in both builds.
list(JOIN _r3fuzz_sanitize " " _r3fuzz_sanitize_text)
string(APPEND CMAKE_CXX_FLAGS " ${_r3fuzz_sanitize_text} -fsanitize=fuzzer-no-link -gline-tables-only")
string(TOUPPER "${CMAKE_BUILD_TYPE}" _r3fuzz_config)
set(R3FUZZ_FUZZING_BUILDER_CXXFLAGS "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_r3fuzz_config}}")
string(STRIP "${R3FUZZ_FUZZING_BUILDER_CXXFLAGS}" R3FUZZ_FUZZING_BUILDER_CXXFLAGS)
target_link_options(r3fuzz_options INTERFACE ${_r3fuzz_sanitize})
target_link_options(r3fuzz_fuzzer_engine INTERFACE -fsanitize=fuzzer)
unset(_r3fuzz_sanitize)
unset(_r3fuzz_sanitize_text)
unset(_r3fuzz_config)
