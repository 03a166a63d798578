# Optional CUDA (style: LANGUAGES CXX, then enable_language(CUDA) only when found
# or asked). Sets R3FUZZ_CUDA_ENABLED (ON/OFF) for subdirectories; when ON, also
# CUDA::cudart (CUDAToolkit) and, when NCCL is found, the r3fuzz::nccl target
# with R3FUZZ_NCCL_FOUND=ON.

set(R3FUZZ_CUDA_ENABLED OFF)
set(R3FUZZ_NCCL_FOUND OFF)

if(R3FUZZ_CUDA STREQUAL "OFF")
  message(STATUS "r3fuzz: CUDA targets off: R3FUZZ_CUDA=OFF")
  return()
endif()
if(R3FUZZ_CUDA STREQUAL "AUTO" AND R3FUZZ_FUZZING)
  message(STATUS "r3fuzz: CUDA targets off: fuzzing mode (set R3FUZZ_CUDA=ON to force)")
  return()
endif()

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  if(R3FUZZ_CUDA STREQUAL "ON")
    message(FATAL_ERROR "r3fuzz: R3FUZZ_CUDA=ON but no nvcc was found; "
                        "set CMAKE_CUDA_COMPILER=/path/to/nvcc, or use R3FUZZ_CUDA=AUTO/OFF")
  endif()
  message(STATUS "r3fuzz: CUDA targets off: no nvcc found")
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build for" FORCE)
endif()
if(NOT DEFINED CMAKE_CUDA_COMPILER_LAUNCHER AND R3FUZZ_CCACHE_PROGRAM
   AND "${CMAKE_CXX_COMPILER_LAUNCHER}" MATCHES "ccache")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${R3FUZZ_CCACHE_PROGRAM}")
endif()

enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(R3FUZZ_CUDA_ENABLED ON)
message(STATUS "r3fuzz: CUDA targets on: ${CMAKE_CUDA_COMPILER} "
               "(${CMAKE_CUDA_COMPILER_VERSION}), architectures ${CMAKE_CUDA_ARCHITECTURES}")

set(CMAKE_CUDA_EXTENSIONS OFF)
# CMake 3.25 knows nvcc only up to cuda_std_17; pass the flag ourselves there.
if("cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
  target_compile_features(r3fuzz_options INTERFACE cuda_std_20)
else()
  target_compile_options(r3fuzz_options INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
endif()
target_compile_options(r3fuzz_options INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)

# NCCL ships beside the toolkit here (/usr/local/cuda/{include,lib64}); also
# honour NCCL_ROOT / NCCL_HOME.
find_path(R3FUZZ_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_ROOT ENV NCCL_HOME PATH_SUFFIXES include)
find_library(R3FUZZ_NCCL_LIBRARY nccl
  HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_ROOT ENV NCCL_HOME PATH_SUFFIXES lib lib64)
if(R3FUZZ_NCCL_INCLUDE_DIR AND R3FUZZ_NCCL_LIBRARY)
  add_library(r3fuzz::nccl UNKNOWN IMPORTED)
  set_target_properties(r3fuzz::nccl PROPERTIES
    IMPORTED_LOCATION "${R3FUZZ_NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${R3FUZZ_NCCL_INCLUDE_DIR}")
  set(R3FUZZ_NCCL_FOUND ON)
  message(STATUS "r3fuzz: NCCL: ${R3FUZZ_NCCL_LIBRARY}")
else()
  message(STATUS "r3fuzz: NCCL not found: multi-GPU all-gather off")
endif()
