/* See formats/hdf5/hdf5_lock.h. */
#include "formats/hdf5/hdf5_lock.h"

#include <pthread.h>

static pthread_mutex_t g_hdf5 = PTHREAD_MUTEX_INITIALIZER;

/* A static mutex cannot fail to lock except on misuse (it is never
 * destroyed, and the calls pair up in the two callers), so the results are
 * not propagated. */
void sl_hdf5_lock(void) {
  (void)pthread_mutex_lock(&g_hdf5);
}

void sl_hdf5_unlock(void) {
  (void)pthread_mutex_unlock(&g_hdf5);
}
