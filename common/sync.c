/* See common/sync.h. */
#include "common/sync.h"

int sl_sync_init(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv) {
  int e = pthread_mutex_init(mu, NULL);
  if (e != 0)
    return e;
  for (int i = 0; i < ncv; i++) {
    e = pthread_cond_init(cv[i], NULL);
    if (e != 0) {
      while (i-- > 0)
        pthread_cond_destroy(cv[i]);
      pthread_mutex_destroy(mu);
      return e;
    }
  }
  return 0;
}

void sl_sync_destroy(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv) {
  for (int i = 0; i < ncv; i++)
    pthread_cond_destroy(cv[i]);
  pthread_mutex_destroy(mu);
}
