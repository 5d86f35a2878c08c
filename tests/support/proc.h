/* What the process holds, read from /proc/self: tests that prove a loader
 * leaves no thread, fd or memory behind, and the benchmarks' RSS column.
 * Library sluice_test_proc (no dependencies). */
#ifndef SLUICE_TESTS_SUPPORT_PROC_H
#define SLUICE_TESTS_SUPPORT_PROC_H

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM", "RssAnon"), or -1
 * when it cannot be read. */
long sl_test_status_kib(const char *field);

/* Whether RSS measures the process's own allocations: not under ASan or
 * TSan (shadow memory, quarantine) nor under valgrind (seen in
 * /proc/self/maps, or SLUICE_TEST_VALGRIND=1 as tests/valgrind.sh sets),
 * whose allocators hold memory of their own that grows as they please.
 * Tests of "nothing grows" check only then. */
int sl_test_rss_is_meaningful(void);

/* Entries in a folder (counting . and ..), or -1 when it cannot be opened:
 * /proc/self/task for threads, /proc/self/fd for descriptors. */
int sl_test_count_dir(const char *path);

/* The thread count once threads that were joined have left the process.
 * pthread_join returns when the kernel clears the thread's tid, before the
 * exiting thread is unlisted from /proc/self/task, so right after a join the
 * thread can still be counted (about once in 20000 joins on a loaded
 * machine). Waits, up to 10 s, for the count to fall to `want`; a thread
 * left running never leaves, so a leak is still seen. */
int sl_test_tasks_settled(int want);

#endif
