// FMM_VECTOR_CLONES before a function compiles it twice on x86-64: for AVX2 + FMA (x86-64-v3),
// which the loader picks on CPUs that have them, and for the baseline, so that the binary still
// runs on any x86-64. For the loops of M2P and P2L, which have the near field's shape (P2P has
// its own kernels, p2p.hpp): about 1.6x the interactions per second of the SSE2 loop. The
// loops vectorise with `omp simd`, and sqrt with -fno-math-errno (examples/fmm/CMakeLists.txt).
//
// Not under the sanitizers: the clones are chosen by an ifunc resolver, which runs before the
// sanitizer's runtime is set up and crashes there.
#pragma once

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)  // GCC
#define FMM_VECTOR_CLONES_SANITIZED 1
#elif defined(__has_feature)  // Clang
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define FMM_VECTOR_CLONES_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(FMM_VECTOR_CLONES_SANITIZED)
#if __has_attribute(target_clones)
#define FMM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#endif
#ifndef FMM_VECTOR_CLONES
#define FMM_VECTOR_CLONES
#endif
