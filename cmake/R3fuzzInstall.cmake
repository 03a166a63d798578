# The installable CMake package: `cmake --install` puts the headers, the static libraries
# and the r3fuzz tool under the prefix, and find_package(r3fuzz) gives r3fuzz::r3fuzz, an
# imported target that carries everything the C++ plug-in API (fuzz/plugin/plugin.hpp)
# needs. Included at the end of the root CMakeLists.txt, once every target exists.
#
# The libraries to install are found by walking the link closure of r3fuzz_plugin, so a
# library that another part of r3fuzz starts depending on is installed without an edit
# here. Anything the walk cannot export (an imported dependency this file does not know how
# to find again, or a source-tree include path) switches the package off with a printed
# reason instead of failing the configure.

if(NOT TARGET r3fuzz_plugin)
  message(STATUS "r3fuzz: install package off: no r3fuzz_plugin target")
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Imported dependencies, and how the package config finds each again.
set(_r3fuzz_known_deps
  "nlohmann_json::nlohmann_json=nlohmann_json 3"
  "CLI11::CLI11=CLI11"
  "Threads::Threads=Threads"
  "CUDA::cudart=CUDAToolkit"
  "CUDA::cudart_static=CUDAToolkit")

set(_r3fuzz_install_targets "")
set(_r3fuzz_find_deps "")
set(_r3fuzz_install_problem "")
set(_r3fuzz_work r3fuzz_plugin)
while(_r3fuzz_work)
  list(POP_FRONT _r3fuzz_work _t)
  get_target_property(_aliased ${_t} ALIASED_TARGET)
  if(_aliased)
    set(_t ${_aliased})
  endif()
  if(_t IN_LIST _r3fuzz_install_targets)
    continue()
  endif()
  get_target_property(_imported ${_t} IMPORTED)
  if(_imported)
    set(_found "")
    foreach(_entry IN LISTS _r3fuzz_known_deps)
      string(REPLACE "=" ";" _pair "${_entry}")
      list(GET _pair 0 _name)
      list(GET _pair 1 _find)
      if(_name STREQUAL _t)
        set(_found "${_find}")
      endif()
    endforeach()
    if(_found STREQUAL "")
      set(_r3fuzz_install_problem "it depends on the imported target ${_t}, which the package cannot find again")
      break()
    endif()
    if(NOT _found IN_LIST _r3fuzz_find_deps)
      list(APPEND _r3fuzz_find_deps "${_found}")
    endif()
    continue()
  endif()
  list(APPEND _r3fuzz_install_targets ${_t})
  get_target_property(_includes ${_t} INTERFACE_INCLUDE_DIRECTORIES)
  foreach(_dir IN LISTS _includes)
    if(_dir AND NOT _dir MATCHES "^\\$<" AND (_dir MATCHES "^${PROJECT_SOURCE_DIR}" OR _dir MATCHES "^${PROJECT_BINARY_DIR}"))
      set(_r3fuzz_install_problem "${_t} exports the build-tree include path ${_dir}")
    endif()
  endforeach()
  get_target_property(_libs ${_t} INTERFACE_LINK_LIBRARIES)
  foreach(_lib IN LISTS _libs)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _lib "${_lib}")
    if(_lib AND NOT _lib MATCHES "^\\$<" AND TARGET ${_lib})
      list(APPEND _r3fuzz_work ${_lib})
    endif()
  endforeach()
endwhile()

if(_r3fuzz_install_problem)
  message(STATUS "r3fuzz: install package off: ${_r3fuzz_install_problem}")
  return()
endif()

# One target for users: everything the plug-in API links.
add_library(r3fuzz_all INTERFACE)
target_link_libraries(r3fuzz_all INTERFACE r3fuzz_plugin)
set_target_properties(r3fuzz_all PROPERTIES EXPORT_NAME r3fuzz)
add_library(r3fuzz::r3fuzz ALIAS r3fuzz_all)

install(TARGETS r3fuzz_all ${_r3fuzz_install_targets}
  EXPORT r3fuzzTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/r3fuzz)
if(TARGET r3fuzz)
  install(TARGETS r3fuzz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Headers keep their project paths ("reference/case.hpp", "fuzz/plugin/plugin.hpp") under
# include/r3fuzz, the include directory r3fuzz_reference exports.
foreach(_dir IN ITEMS reference fuzz gpu)
  if(EXISTS "${PROJECT_SOURCE_DIR}/${_dir}")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/${_dir}/"
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/r3fuzz/${_dir}
      FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.cuh")
  endif()
endforeach()

set(R3FUZZ_PACKAGE_DEPENDENCIES "")
foreach(_dep IN LISTS _r3fuzz_find_deps)
  string(APPEND R3FUZZ_PACKAGE_DEPENDENCIES "find_dependency(${_dep})\n")
endforeach()

set(_r3fuzz_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/r3fuzz)
install(EXPORT r3fuzzTargets NAMESPACE r3fuzz:: DESTINATION ${_r3fuzz_cmake_dir})
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/r3fuzzConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/r3fuzzConfig.cmake"
  INSTALL_DESTINATION ${_r3fuzz_cmake_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/r3fuzzConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/r3fuzzConfig.cmake" "${PROJECT_BINARY_DIR}/r3fuzzConfigVersion.cmake"
  DESTINATION ${_r3fuzz_cmake_dir})
set(R3FUZZ_INSTALL_ENABLED ON)
message(STATUS "r3fuzz: install package: r3fuzz::r3fuzz (${_r3fuzz_install_targets})")
