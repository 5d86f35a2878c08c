/* A mutex and its condition variables, created and destroyed together, so
 * that an error path never destroys what was never created.
 * Thread safety: call from the owning object's create/destroy only. */
#ifndef SLUICE_COMMON_SYNC_H
#define SLUICE_COMMON_SYNC_H

#include <pthread.h>

/* Initialises mu and the ncv condition variables cv[0..ncv), whose timed
 * waits measure CLOCK_MONOTONIC (a wall-clock step neither ends nor
 * stretches them). Returns 0, or the pthread error number with nothing
 * left initialised. */
int sl_sync_init(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv);
/* Destroys what sl_sync_init created. */
void sl_sync_destroy(pthread_mutex_t *mu, pthread_cond_t *const *cv, int ncv);

#endif
