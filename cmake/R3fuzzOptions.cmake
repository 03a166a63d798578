# Project options and the r3fuzz_options INTERFACE target that every r3fuzz
# library, executable and test links. Warnings, the language standard and mode
# defines live here, never in global CMAKE_CXX_FLAGS.

option(R3FUZZ_BUILD_TESTS "Build the unit tests, properties and end-to-end tests (needs GTest and rapidcheck)" ON)
option(R3FUZZ_FUZZING "libFuzzer + ASan + UBSan build (clang only; fails fast otherwise)" OFF)
set(R3FUZZ_CUDA "AUTO" CACHE STRING "Build CUDA targets: AUTO (when nvcc is found), ON (required), OFF")
set_property(CACHE R3FUZZ_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${R3FUZZ_CUDA}" R3FUZZ_CUDA)
if(NOT R3FUZZ_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "r3fuzz: R3FUZZ_CUDA must be AUTO, ON or OFF, got '${R3FUZZ_CUDA}'")
endif()

# ccache, unless the user already chose a launcher.
if(NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(R3FUZZ_CCACHE_PROGRAM ccache)
  if(R3FUZZ_CCACHE_PROGRAM)
    # Precompiled headers (r3fuzz_precompile below) are cacheable only with this sloppiness.
    set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;${R3FUZZ_CCACHE_PROGRAM}")
    message(STATUS "r3fuzz: using ccache: ${R3FUZZ_CCACHE_PROGRAM}")
  endif()
endif()

add_library(r3fuzz_options INTERFACE)
add_library(r3fuzz::options ALIAS r3fuzz_options)
target_compile_features(r3fuzz_options INTERFACE cxx_std_20)
set(CMAKE_CXX_EXTENSIONS OFF)
target_compile_options(r3fuzz_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>)
# GCC 12's -Wrestrict and -Wstringop-overflow fire inside libstdc++ on `"literal" + std::string&&`
# (operator+ inlined into basic_string::insert/_M_replace: "accessing 9223372036854775810 or more
# bytes"), a known false positive: GCC bugs 105329 and 105651, fixed in GCC 13. Silenced here, the
# one place, for GCC 12 only; every other compiler keeps both warnings.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(r3fuzz_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict -Wno-stringop-overflow>)
endif()

# r3fuzz_precompile(TARGET HEADERS...): the heavy third-party headers (CLI11, nlohmann/json,
# GoogleTest, RapidCheck) parsed once per target instead of once per translation unit; they
# dominate the build's time. R3FUZZ_PCH=OFF turns it off (e.g. for include-what-you-use).
option(R3FUZZ_PCH "Precompile the heavy third-party headers" ON)
function(r3fuzz_precompile target)
  if(R3FUZZ_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
