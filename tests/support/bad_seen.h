/* What verify mode reported, for tests that open damaged files in it
 * (sl_dataset_open_verify, sl_source_open_verify_opts): how many bad
 * samples, the first and the last with their reasons. Header-only, so
 * that tests of the internal stages need not link the public library.
 *
 * Thread safety: one sl_test_bad_seen per open (the callback writes it). */
#ifndef SLUICE_TESTS_SUPPORT_BAD_SEEN_H
#define SLUICE_TESTS_SUPPORT_BAD_SEEN_H

#include <stdint.h>
#include <stdio.h>

typedef struct sl_test_bad_seen {
  int calls;      /* bad samples reported */
  uint64_t first; /* the first reported */
  char first_reason[600];
  uint64_t index;   /* the last reported */
  char reason[600]; /* the last one's reason */
} sl_test_bad_seen;

/* The bad-sample callback that fills the sl_test_bad_seen user points to
 * (zeroed before the open). */
static inline void sl_test_on_bad(void *user, uint64_t index,
                                  const char *reason) {
  sl_test_bad_seen *b = user;
  if (b->calls++ == 0) {
    b->first = index;
    snprintf(b->first_reason, sizeof b->first_reason, "%s", reason);
  }
  b->index = index;
  snprintf(b->reason, sizeof b->reason, "%s", reason);
}

#endif
