// Whether this build of Versa has its CUDA backend, as the public headers see it. Not part of the
// public API.
#pragma once

// VERSA_HAVE_CUDA is 1 or 0, a PUBLIC compile definition of the versa target (cmake/cuda.cmake):
// every translation unit that links Versa sees the value the library was built with. The headers
// depend on it (TaskType::cuda keeps or drops its body, which changes the task type's C++ type),
// so two files of one program that disagreed would define the same inline functions and
// templates differently, which no linker reports. A file compiled without it would silently take
// one side; refuse instead.
#ifndef VERSA_HAVE_CUDA
#error "VERSA_HAVE_CUDA is undefined: use the versa::versa CMake target, which sets it to 1 or 0"
#endif

namespace versa::detail {

inline constexpr bool cuda_backend = VERSA_HAVE_CUDA != 0;

}  // namespace versa::detail
