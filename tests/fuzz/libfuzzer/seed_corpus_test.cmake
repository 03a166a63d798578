# r3fuzz_seed_corpus: every case of corpus/production becomes one .bin; a bad file is named and
# makes the exit status 2 while the good files beside it are still converted.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/good" "${WORK_DIR}/mixed/in" "${WORK_DIR}/mixed/out")

execute_process(COMMAND "${CONVERTER}" "${WORK_DIR}/good" "${SOURCE_DIR}/corpus/production"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(GLOB cases "${SOURCE_DIR}/corpus/production/*.json")
file(GLOB bins "${WORK_DIR}/good/*.bin")
list(LENGTH cases n_cases)
list(LENGTH bins n_bins)
if(NOT rc EQUAL 0 OR NOT n_bins EQUAL n_cases OR n_cases EQUAL 0)
  message(FATAL_ERROR "corpus/production: exit ${rc}, ${n_bins} .bin for ${n_cases} cases\n${out}${err}")
endif()
if(NOT out STREQUAL "r3fuzz_seed_corpus: wrote ${n_cases} input(s) into ${WORK_DIR}/good\n")
  message(FATAL_ERROR "unexpected output: ${out}")
endif()

list(GET cases 0 first)
file(COPY "${first}" DESTINATION "${WORK_DIR}/mixed/in")
file(WRITE "${WORK_DIR}/mixed/in/bad.json" "{\"format\": \"r3fuzz-case/1\"")
execute_process(COMMAND "${CONVERTER}" "${WORK_DIR}/mixed/out" "${WORK_DIR}/mixed/in"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(GLOB bins "${WORK_DIR}/mixed/out/*.bin")
list(LENGTH bins n_bins)
if(NOT rc EQUAL 2 OR NOT n_bins EQUAL 1 OR NOT err MATCHES "^r3fuzz_seed_corpus: ${WORK_DIR}/mixed/in/bad.json: ")
  message(FATAL_ERROR "a bad file: exit ${rc}, ${n_bins} .bin\nstdout: ${out}\nstderr: ${err}")
endif()
