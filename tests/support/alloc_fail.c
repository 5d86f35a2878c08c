/* The allocator hook of alloc_fail.h. */
#include "support/alloc_fail.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
char *__wrap_strdup(const char *s);

static atomic_long g_countdown; /* calls until the one that fails; 0: none */
static atomic_long g_failed;    /* failures injected since armed */
static long g_k;                /* the armed k, for the message */
static int g_announce;          /* armed from the environment */
static atomic_ullong g_largest; /* the largest request since reset */

static void note(unsigned long long n) {
  unsigned long long was = atomic_load(&g_largest);
  while (n > was && !atomic_compare_exchange_weak(&g_largest, &was, n))
    ;
}

/* a × b, saturated. */
static unsigned long long product(size_t a, size_t b) {
  return b && a > (size_t)-1 / b ? (unsigned long long)-1
                                 : (unsigned long long)a * b;
}

static int fail_now(void) {
  if (atomic_load(&g_countdown) <= 0)
    return 0;
  if (atomic_fetch_sub(&g_countdown, 1) != 1)
    return 0;
  atomic_fetch_add(&g_failed, 1);
  if (g_announce) {
    char line[96];
    int n =
        snprintf(line, sizeof line, SL_ALLOC_FAIL_MARK " %ld failed\n", g_k);
    if (n > 0 && write(2, line, (size_t)n) < 0)
      return 1; /* stderr gone: the failure is still injected */
  }
  return 1;
}

void *__wrap_malloc(size_t n) {
  note(n);
  return fail_now() ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b) {
  note(product(a, b));
  return fail_now() ? NULL : __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n) {
  note(n);
  return fail_now() ? NULL : __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
  note(n);
  return fail_now() ? ENOMEM : __real_posix_memalign(p, a, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
  note(n);
  return fail_now() ? NULL : __real_aligned_alloc(a, n);
}
char *__wrap_strdup(const char *s) {
  return fail_now() ? NULL : __real_strdup(s);
}

void sl_alloc_fail_arm(long k) {
  g_k = k;
  atomic_store(&g_failed, 0);
  atomic_store(&g_countdown, k);
}

int sl_alloc_fail_disarm(void) {
  atomic_store(&g_countdown, 0);
  return atomic_load(&g_failed) > 0;
}

void sl_alloc_largest_reset(void) {
  atomic_store(&g_largest, 0);
}

unsigned long long sl_alloc_largest(void) {
  return atomic_load(&g_largest);
}

__attribute__((constructor)) static void arm_from_env(void) {
  const char *at = getenv("SLUICE_ALLOC_FAIL_AT");
  if (!at || !*at)
    return;
  char *end;
  long k = strtol(at, &end, 10);
  if (*end != '\0' || k <= 0)
    return;
  g_announce = 1;
  sl_alloc_fail_arm(k);
}
