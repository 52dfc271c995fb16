# The CUDA backend (src/cuda), or its stand-in when CUDA is not available. Included by the
# top-level CMakeLists.txt once the `versa` target exists and VERSA_HAVE_CUDA is resolved.
#
# The backend itself is plain C++ against the CUDA runtime, cuBLAS and cuSOLVER; the CUDA
# language is enabled for users' (and the examples') .cu files.

if(VERSA_HAVE_CUDA)
  # 90 builds sm_90 code (H100, H200) plus compute_90 PTX that newer GPUs compile at load time.
  # Never "native": it fails on a build machine without a GPU. Set before enable_language, which
  # would otherwise pick the compiler's default. CUDAARCHS in the environment also counts as set.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build for")
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)

  target_sources(versa PRIVATE
    ${PROJECT_SOURCE_DIR}/src/cuda/check_slots.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/completion_poller.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/cuda_check.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/cuda_device.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/cuda_links.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/device_memory_pool.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/event_pool.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/pending_operation.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/reduction_kernels.cu
    ${PROJECT_SOURCE_DIR}/src/cuda/sm_partition.cpp
    ${PROJECT_SOURCE_DIR}/src/cuda/stream_context.cpp
  )
  # The target predates enable_language, so it did not pick up the architectures. The kernels
  # need nothing newer than C++17; this CMake does not know nvcc's C++20 flag.
  set_target_properties(versa PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
                                         CUDA_STANDARD 17)
  # Public: CUDA implementations in users' code include versa/cuda.hpp, which needs the
  # runtime, cuBLAS and cuSOLVER headers, and call those libraries.
  target_link_libraries(versa PUBLIC CUDA::cudart CUDA::cublas CUDA::cusolver)
else()
  target_sources(versa PRIVATE ${PROJECT_SOURCE_DIR}/src/cuda/no_cuda.cpp)
endif()

# Public and always defined, 1 or 0, so that every translation unit linking Versa agrees with the
# library: without the backend TaskType::cuda drops its body, which changes the task types' C++
# types, and files of one program that disagreed would break the one-definition rule unnoticed.
# The public headers refuse to compile without it (versa/detail/cuda_backend.hpp).
target_compile_definitions(versa PUBLIC VERSA_HAVE_CUDA=$<BOOL:${VERSA_HAVE_CUDA}>)
