#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "common/rng.h"

/* The same key gives the same stream; neighbouring keys differ. */
static void test_pure_function_of_key(void **state) {
  (void)state;
  sl_rng a = sl_rng_for(1, 2, 3), b = sl_rng_for(1, 2, 3);
  sl_rng c = sl_rng_for(1, 2, 4), d = sl_rng_for(1, 3, 3);
  int same_c = 0, same_d = 0;
  for (int i = 0; i < 64; i++) {
    uint64_t x = sl_rng_u64(&a);
    assert_int_equal(x, sl_rng_u64(&b));
    same_c += x == sl_rng_u64(&c);
    same_d += x == sl_rng_u64(&d);
  }
  assert_int_equal(same_c, 0);
  assert_int_equal(same_d, 0);
}

/* Uniform draws look uniform: mean and bucket counts within loose bounds. */
static void test_uniform(void **state) {
  (void)state;
  sl_rng r = sl_rng_for(42, 0, 0);
  enum { N = 200000, B = 10 };
  int buckets[B] = {0};
  double sum = 0;
  for (int i = 0; i < N; i++) {
    double u = sl_rng_uniform(&r);
    assert_true(u >= 0.0 && u < 1.0);
    sum += u;
    buckets[(int)(u * B)]++;
  }
  assert_true(fabs(sum / N - 0.5) < 0.01);
  for (int i = 0; i < B; i++)
    assert_true(abs(buckets[i] - N / B) < N / B / 20);
  for (int i = 0; i < 1000; i++)
    assert_true(sl_rng_below(&r, 7) < 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pure_function_of_key),
      cmocka_unit_test(test_uniform),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
