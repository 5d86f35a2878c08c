/* One lock around every HDF5 call of the process.
 *
 * Debian's HDF5 (hdf5-serial) is not thread-safe: two threads inside the
 * library at once (two datasets opened, or two writers committing, at the
 * same time) race on its global state, error stack included. sluice calls
 * HDF5 only at open and at commit, so one process-wide mutex costs nothing
 * on the hot path. It is the only global state of the library, and it
 * exists because the library it guards has global state. Code outside
 * sluice that calls HDF5 itself at the same time is not covered. */
#ifndef SLUICE_FORMATS_HDF5_LOCK_H
#define SLUICE_FORMATS_HDF5_LOCK_H

void sl_hdf5_lock(void);
void sl_hdf5_unlock(void);

#endif
