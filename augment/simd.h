/* The vector paths the augment stage may take. SL_AUGMENT_AVX2 is 1 where
 * the compiler builds AVX2 functions (x86-64 with GCC or Clang: each such
 * function carries target("avx2"), the rest of the file stays SSE2) and the
 * build keeps them (cmake -DSLUICE_AVX2=OFF defines SLUICE_NO_AVX2: the SSE2
 * and scalar loops then run everywhere, which is how CI tests them on a CPU
 * that has AVX2). sl_avx2() says whether this CPU runs them. Every AVX2 loop
 * gives the bytes of its SSE2 and scalar twins. */
#ifndef SLUICE_AUGMENT_SIMD_H
#define SLUICE_AUGMENT_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SLUICE_NO_AVX2)
#include <immintrin.h>
#define SL_AUGMENT_AVX2 1
static inline int sl_avx2(void) {
  return __builtin_cpu_supports("avx2");
}
#else
#define SL_AUGMENT_AVX2 0
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#endif

#endif
