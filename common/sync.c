/* See common/sync.h. */
#include "common/sync.h"

#include <time.h>

int sl_sync_init(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv) {
  pthread_condattr_t ca;
  int e = pthread_condattr_init(&ca);
  if (e != 0)
    return e;
  e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  if (e == 0)
    e = pthread_mutex_init(mu, NULL);
  if (e != 0) {
    pthread_condattr_destroy(&ca);
    return e;
  }
  for (int i = 0; i < ncv; i++) {
    e = pthread_cond_init(cv[i], &ca);
    if (e != 0) {
      while (i-- > 0)
        pthread_cond_destroy(cv[i]);
      pthread_mutex_destroy(mu);
      break;
    }
  }
  pthread_condattr_destroy(&ca);
  return e;
}

void sl_sync_destroy(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv) {
  for (int i = 0; i < ncv; i++)
    pthread_cond_destroy(cv[i]);
  pthread_mutex_destroy(mu);
}
