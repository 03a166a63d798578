# `r3fuzz run --impl external:...` end to end (see CMakeLists.txt).
file(REMOVE_RECURSE "${WORK_DIR}")

function(expect_in text needle what)
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: the output lacks '${needle}':\n${text}")
  endif()
endfunction()

# 1. The example adapter and the model find the same signatures on the same cases.
set(adapter "python3 ${SOURCE_DIR}/examples/python/vllm_50874_adapter.py")
execute_process(COMMAND "${R3FUZZ}" run --impl "external:${adapter}" --impl vllm-50874 --cases 400 --mode concrete
                        --out "${WORK_DIR}/agree"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "r3fuzz run exited ${rc}, expected 1 (vllm-50874 has known findings):\n${out}\n${err}")
endif()
# Signatures as "/verdict/path/branch severity" (no brackets: CMake lists treat them specially).
string(REGEX MATCHALL " vllm-50874/[a-z_]+/[a-z_]+/[a-z_]+ .[a-z]+" model "${out}")
string(REGEX MATCHALL "vllm_50874_adapter.py/[a-z_]+/[a-z_]+/[a-z_]+ .[a-z]+" external "${out}")
list(TRANSFORM model REPLACE "^ vllm-50874" "")
list(TRANSFORM external REPLACE "^vllm_50874_adapter.py" "")
list(SORT model)
list(SORT external)
if(NOT model OR NOT model STREQUAL external)
  message(FATAL_ERROR "signatures differ:\nmodel:    ${model}\nexternal: ${external}\n${out}")
endif()

# 2. Garbage on every 40th request: adapter_error with the line quoted, and the run goes on.
set(bad "python3 ${SOURCE_DIR}/tests/fuzz/adapter/misbehaving_adapter.py garbage 40")
# One worker: the adapter garbles its own 40th request, so the request numbers are one process's.
execute_process(COMMAND "${R3FUZZ}" run --jobs 1 --impl "external:${bad}" --cases 60 --mode concrete --adapter-timeout 2
                        --out "${WORK_DIR}/bad"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "r3fuzz run exited ${rc}, expected 1:\n${out}\n${err}")
endif()
expect_in("${out}" "failed to run: the reply to request 40 is not JSON: \"this is not json\"" "garbage adapter")
expect_in("${out}" "60 cases" "garbage adapter")
message(STATUS "signatures agree (${model}); adapter errors reported and the run finished")
