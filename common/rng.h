/* Counter-based random numbers: a pure function of (key, counter).
 *
 * Augmentation draws must not depend on which thread handles a sample or in
 * what order, so there is no RNG state shared between samples: each sample
 * gets a stream keyed by (seed, epoch, sample index), and the i-th draw of that
 * stream is mix(key, i). The mixer is SplitMix64's finaliser applied twice,
 * which passes BigCrush as a counter-based generator (Steele et al., 2014). */
#ifndef SLUICE_COMMON_RNG_H
#define SLUICE_COMMON_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct sl_rng {
  uint64_t key;
  uint64_t counter;
} sl_rng;

static inline uint64_t sl_mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A stream for (seed, a, b): e.g. (seed, epoch, sample index). Distinct
 * tuples give independent streams. */
static inline sl_rng sl_rng_for(uint64_t seed, uint64_t a, uint64_t b) {
  sl_rng r;
  r.key = sl_mix64(sl_mix64(sl_mix64(seed) ^ a) ^ (b * 0xd1b54a32d192ed03ULL));
  r.counter = 0;
  return r;
}

static inline uint64_t sl_rng_u64(sl_rng *r) {
  return sl_mix64(r->key ^ sl_mix64(r->counter++));
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double sl_rng_uniform(sl_rng *r) {
  return (double)(sl_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method). */
static inline uint64_t sl_rng_below(sl_rng *r, uint64_t n) {
  uint64_t x = sl_rng_u64(r);
  __uint128_t m = (__uint128_t)x * n;
  uint64_t lo = (uint64_t)m;
  if (lo < n) {
    uint64_t t = (0 - n) % n;
    while (lo < t) {
      x = sl_rng_u64(r);
      m = (__uint128_t)x * n;
      lo = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* A standard normal draw: Box-Muller on two uniforms (two draws). */
static inline double sl_rng_normal(sl_rng *r) {
  double u1 = 1.0 - sl_rng_uniform(r), u2 = sl_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
