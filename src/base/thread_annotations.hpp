// Clang thread-safety annotations; they expand to nothing on other compilers.
#pragma once

#if defined(__clang__)
#define VERSA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define VERSA_THREAD_ANNOTATION(x)
#endif

#define VERSA_CAPABILITY(x) VERSA_THREAD_ANNOTATION(capability(x))
#define VERSA_GUARDED_BY(x) VERSA_THREAD_ANNOTATION(guarded_by(x))
#define VERSA_REQUIRES(...) VERSA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define VERSA_ACQUIRE(...) VERSA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define VERSA_RELEASE(...) VERSA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define VERSA_TRY_ACQUIRE(...) VERSA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define VERSA_SCOPED_CAPABILITY VERSA_THREAD_ANNOTATION(scoped_lockable)
#define VERSA_RETURN_CAPABILITY(x) VERSA_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function: only where it cannot follow the code, with a comment
// saying why.
#define VERSA_NO_THREAD_SAFETY_ANALYSIS VERSA_THREAD_ANNOTATION(no_thread_safety_analysis)

// VERSA_TSAN is 1 when building with ThreadSanitizer (GCC or Clang).
#if defined(__SANITIZE_THREAD__)
#define VERSA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VERSA_TSAN 1
#endif
#endif
#ifndef VERSA_TSAN
#define VERSA_TSAN 0
#endif
