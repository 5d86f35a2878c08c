#include "io/io_guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The copy in progress on this thread: its jump buffer and range. Set and
 * cleared only by the thread itself, read by its own signal handler. */
static _Thread_local sigjmp_buf *volatile t_jump;
static _Thread_local const char *volatile t_lo, *volatile t_hi;
static _Thread_local const char *volatile t_fault;

static struct sigaction g_prev; /* the handler before sluice's */

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  sigjmp_buf *j = t_jump;
  const char *a = si ? (const char *)si->si_addr : NULL;
  if (j && a >= t_lo && a < t_hi) {
    t_fault = a;
    t_jump = NULL;
    siglongjmp(*j, 1);
  }
  /* Not sluice's fault: whoever handled SIGBUS before. A previous handler
   * with SA_RESETHAND or without SA_NODEFER sees those flags ignored. */
  if (g_prev.sa_flags & SA_SIGINFO) {
    if (g_prev.sa_sigaction) {
      g_prev.sa_sigaction(sig, si, uc);
      return;
    }
  } else if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
    g_prev.sa_handler(sig);
    return;
  }
  /* The default: returning re-runs the faulting access, which now takes
   * the default action (the process dies with SIGBUS, as without sluice). */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGBUS, &dfl, NULL);
  if (!si || si->si_code <= 0) /* sent by kill(): no access to re-run */
    raise(sig);
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

sl_status sl_guard_install(sl_err *err) {
  /* Installed again when something replaced it since (e.g. a test
   * harness restoring its own): sluice's goes on top, chaining to it. */
  pthread_mutex_lock(&g_lock);
  struct sigaction cur;
  int rc = sigaction(SIGBUS, NULL, &cur);
  if (rc == 0 &&
      !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)) {
    g_prev = cur; /* not read while on_sigbus is not installed */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    /* NODEFER: SIGBUS stays unblocked across the jump, so sigsetjmp need
     * not save the signal mask (no syscall per copy). */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    rc = sigaction(SIGBUS, &sa, NULL);
  }
  int e = errno;
  pthread_mutex_unlock(&g_lock);
  if (rc != 0)
    return sl_err_errno(err, SL_EIO, e, "sigaction(SIGBUS)");
  return SL_OK;
}

bool sl_guard_ready(void) {
  struct sigaction cur;
  if (sigaction(SIGBUS, NULL, &cur) != 0)
    return false;
  return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus;
}

bool sl_guard_copy(void *dst, const void *src, size_t n, size_t *fault_off) {
  *fault_off = 0;
  if (n == 0)
    return true;
  sigjmp_buf jb;
  t_lo = src;
  t_hi = (const char *)src + n;
  if (sigsetjmp(jb, 0)) {
    atomic_signal_fence(memory_order_seq_cst);
    *fault_off = (size_t)(t_fault - (const char *)src);
    /* SA_NODEFER keeps SIGBUS unblocked across the jump, but a runtime
     * that interposes on sigaction (ThreadSanitizer runs handlers from its
     * own, installed without it) may have blocked it, and the next fault
     * on this thread would then kill the process. Unblocking costs a
     * syscall on this, the fault path, only; it cannot fail for a valid
     * signal set, and if it did the fault at hand is still reported. */
    sigset_t bus;
    if (sigemptyset(&bus) == 0 && sigaddset(&bus, SIGBUS) == 0)
      (void)pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
    return false;
  }
  t_jump = &jb;
  atomic_signal_fence(memory_order_seq_cst);
  memcpy(dst, src, n);
  atomic_signal_fence(memory_order_seq_cst);
  t_jump = NULL;
  return true;
}
