/* Monotonic time in nanoseconds, for stage timings and stats.
 * CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; should it
 * ever, the reading is 0 and only a statistic is off. Thread safe. */
#ifndef SLUICE_COMMON_CLOCK_H
#define SLUICE_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sl_now_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
