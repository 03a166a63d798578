# Installs the build tree into WORK_DIR/prefix, builds examples/cpp-plugin against it and
# runs it: the example's capture lacks the gathered-SP-shards branch, so the campaign must
# exit 1 and report exactly that signature.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
if(NOT EXISTS "${prefix}/lib/cmake/r3fuzz/r3fuzzConfig.cmake" OR NOT EXISTS "${prefix}/include/r3fuzz/fuzz/plugin/plugin.hpp")
  message(FATAL_ERROR "the install is missing r3fuzzConfig.cmake or plugin.hpp under ${prefix}")
endif()
run_step("configuring the example" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=RelWithDebInfo)
run_step("building the example" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")

execute_process(COMMAND "${WORK_DIR}/build/my_capture_campaign" 400 1 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the example exited ${rc}, expected 1 (failures found):\n${out}\n${err}")
endif()
string(FIND "${out}" "my-capture/spurious_reject/gathered/error (failure" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the example's report lacks my-capture/spurious_reject/gathered/error:\n${out}")
endif()
message(STATUS "example built against ${prefix} and found the missing gathered-shards branch")
