# Detects the CUDA backend's dependencies: a CUDA compiler (check_language),
# the CUDA toolkit (cuBLAS, cudart) and NCCL (nccl.h and libnccl, looked for
# under NCCL_ROOT, $NCCL_HOME and the toolkit). When all are found, enables
# the CUDA language and sets SHARDSYNTH_HAVE_CUDA (ON) and
# SHARDSYNTH_NCCL_INCLUDE_DIR / SHARDSYNTH_NCCL_LIBRARY for runtime/CMakeLists.txt.
option(SHARDSYNTH_CUDA "Build the CUDA backend (cuBLAS, CUDA kernels, NCCL) when the toolkit and NCCL are found" ON)
set(SHARDSYNTH_HAVE_CUDA OFF)

if(NOT SHARDSYNTH_CUDA)
  message(STATUS "shardsynth: CUDA backend OFF: disabled with -DSHARDSYNTH_CUDA=OFF")
  return()
endif()

# A default nvcc location, so a toolkit outside PATH is still found.
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "shardsynth: CUDA backend OFF: no CUDA compiler (nvcc) found; set CUDACXX or CMAKE_CUDA_COMPILER")
  return()
endif()

get_filename_component(_shardsynth_cuda_root "${CMAKE_CUDA_COMPILER}" DIRECTORY)
get_filename_component(_shardsynth_cuda_root "${_shardsynth_cuda_root}" DIRECTORY)
if(NOT CUDAToolkit_ROOT)
  set(CUDAToolkit_ROOT "${_shardsynth_cuda_root}")
endif()
find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas OR NOT TARGET CUDA::cudart)
  message(STATUS "shardsynth: CUDA backend OFF: the CUDA toolkit (cudart, cuBLAS) was not found next to ${CMAKE_CUDA_COMPILER}")
  return()
endif()

find_path(SHARDSYNTH_NCCL_INCLUDE_DIR nccl.h
          HINTS ${NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS} ${_shardsynth_cuda_root} /usr/local/cuda
          PATH_SUFFIXES include)
find_library(SHARDSYNTH_NCCL_LIBRARY nccl
             HINTS ${NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR} ${_shardsynth_cuda_root} /usr/local/cuda
             PATH_SUFFIXES lib lib64)
if(NOT SHARDSYNTH_NCCL_INCLUDE_DIR OR NOT SHARDSYNTH_NCCL_LIBRARY)
  message(STATUS "shardsynth: CUDA backend OFF: NCCL not found (nccl.h: ${SHARDSYNTH_NCCL_INCLUDE_DIR}, "
                 "libnccl: ${SHARDSYNTH_NCCL_LIBRARY}); set NCCL_ROOT")
  return()
endif()

# A100 (sm_80) and H100/H200 (sm_90).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "80;90")
endif()
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)  # the same cudart as CUDA::cudart
enable_language(CUDA)

set(SHARDSYNTH_HAVE_CUDA ON)
message(STATUS "shardsynth: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, NCCL at ${SHARDSYNTH_NCCL_LIBRARY}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES})")
