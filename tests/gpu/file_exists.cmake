# cmake -DFILE=path -P file_exists.cmake: fails unless FILE exists and is not empty.
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "missing: ${FILE}")
endif()
file(SIZE "${FILE}" size)
if(size EQUAL 0)
  message(FATAL_ERROR "empty: ${FILE}")
endif()
message(STATUS "present: ${FILE} (${size} bytes)")
