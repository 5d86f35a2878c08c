/* Allocation failure injection for tests: link alloc_fail.c into a program
 * whose objects are linked with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,
 *       --wrap=aligned_alloc,--wrap=strdup
 * (SL_ALLOC_FAIL_WRAP in tests/CMakeLists.txt). Only calls made by objects
 * linked into the program are counted: allocations inside shared libraries
 * (liblmdb, libhdf5, libjpeg, glibc's own) are not.
 *
 * In-process: sl_alloc_fail_arm(k) makes the kth counted call from now on
 * fail (malloc, calloc, realloc, aligned_alloc and strdup return NULL,
 * posix_memalign ENOMEM); sl_alloc_fail_disarm() says whether it did.
 *
 * A whole program (the `sluice` command): SLUICE_ALLOC_FAIL_AT=k in the
 * environment arms the kth call from the start of the process; when it
 * fails, "sluice-alloc-fail: allocation k failed" goes to stderr, so the
 * driver knows the program reached it. Thread safe (one atomic counter).
 *
 * sl_alloc_largest() is the largest single request (bytes) a counted call
 * made since sl_alloc_largest_reset(): what an input made the code ask for,
 * whether or not the allocation succeeded. */
#ifndef SLUICE_TESTS_ALLOC_FAIL_H
#define SLUICE_TESTS_ALLOC_FAIL_H

#define SL_ALLOC_FAIL_MARK "sluice-alloc-fail: allocation"

void sl_alloc_fail_arm(long k);
int sl_alloc_fail_disarm(void);
void sl_alloc_largest_reset(void);
unsigned long long sl_alloc_largest(void);

#endif
