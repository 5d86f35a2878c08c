/* The SIGBUS guard takes only a fault the kernel raised for a copy's own
 * (common/map_guard.c, issue 25): a SIGBUS queued by a process (si_code <= 0:
 * SI_QUEUE, SI_USER, SI_TKILL) carries a pid and uid where a fault's
 * address would be, and must go on down the chain even when those bytes
 * happen to point inside the range being copied. Before the check, such a
 * signal jumped out of the copy, which then reported a fault that never
 * happened.
 *
 * In a process of its own (no test harness's handler underneath): the
 * application's SIGBUS handler first, then sluice's on top. Thread A copies
 * 64 MiB of a memfd mapping through sl_guard_copy, again and again; thread
 * B queues a SIGBUS to A (rt_tgsigqueueinfo, si_code SI_QUEUE) whose
 * address field points into the middle of that mapping, while A copies.
 * Every copy must succeed, and the application's handler must see the
 * signal once. (Should the signal land between two copies, the test still
 * passes: it cannot fail wrongly, only miss.) Exit 0: pass. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/map_guard.h"

enum { MAP_BYTES = 64 << 20 };

static atomic_int g_app_calls;
static atomic_int g_copying; /* A is about to copy, or copying */
static atomic_int g_tid;     /* A's thread id */
static const char *g_map;
static char *g_dst;

static void app_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
  atomic_fetch_add(&g_app_calls, 1);
}

static void *copier(void *arg) {
  int *failed = arg;
  atomic_store(&g_tid, (int)syscall(SYS_gettid));
  /* Copies until the signal has come and one more copy is done. */
  for (int round = 0, after = 0; round < 200 && after < 1; round++) {
    int seen = atomic_load(&g_app_calls);
    atomic_store(&g_copying, 1);
    size_t off = 0;
    if (!sl_guard_copy(g_dst, g_map, MAP_BYTES, &off)) {
      fprintf(stderr,
              "test_guard_sigqueue: FAILED: copy %d reported a fault at "
              "offset %zu: a queued SIGBUS was taken for the copy's\n",
              round, off);
      *failed = 1;
      return NULL;
    }
    after += seen > 0;
  }
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = app_handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, NULL) != 0) {
    perror("test_guard_sigqueue: sigaction");
    return 1;
  }
  sl_err err = {0};
  if (sl_guard_install(&err) != SL_OK || !sl_guard_ready()) {
    fprintf(stderr, "test_guard_sigqueue: sl_guard_install: %s\n", err.msg);
    return 1;
  }
  int fd = memfd_create("guard-sigqueue", 0);
  if (fd < 0 || ftruncate(fd, MAP_BYTES) != 0) {
    perror("test_guard_sigqueue: memfd");
    return 1;
  }
  char *w = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  void *r = mmap(NULL, MAP_BYTES, PROT_READ, MAP_SHARED, fd, 0);
  g_dst = malloc(MAP_BYTES);
  if (w == MAP_FAILED || r == MAP_FAILED || !g_dst) {
    perror("test_guard_sigqueue: mmap");
    return 1;
  }
  memset(w, 0x5a, MAP_BYTES); /* every page present: no real fault */
  g_map = r;

  int failed = 0;
  pthread_t a;
  if (pthread_create(&a, NULL, copier, &failed) != 0) {
    fprintf(stderr, "test_guard_sigqueue: pthread_create failed\n");
    return 1;
  }
  while (!atomic_load(&g_copying))
    ;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = SIGBUS;
  si.si_code = SI_QUEUE;
  /* A forged fault address inside the copy's range, where a queued
   * signal's pid and uid sit. */
  si.si_addr = (char *)r + MAP_BYTES / 2;
  if (syscall(SYS_rt_tgsigqueueinfo, getpid(), atomic_load(&g_tid), SIGBUS,
              &si) != 0) {
    perror("test_guard_sigqueue: rt_tgsigqueueinfo");
    return 1;
  }
  pthread_join(a, NULL);
  int calls = atomic_load(&g_app_calls);
  printf("test_guard_sigqueue: application handler called %d time(s); "
         "copies %s\n",
         calls, failed ? "FAILED" : "all succeeded");
  if (failed || calls != 1) {
    fprintf(stderr, "test_guard_sigqueue: FAILED: expected every copy to "
                    "succeed and one call of the application's handler\n");
    return 1;
  }
  return 0;
}
