#include "common/map_guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The thread-locals the handler reads use the initial-exec model: with the
 * general-dynamic one (libsluice is dlopen'ed by Python) the first touch on
 * a thread may allocate its TLS block, inside the handler. */
#if defined(__GNUC__)
#define SL_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define SL_TLS_IE
#endif

/* The copy in progress on this thread: its jump buffer and range. Set and
 * cleared only by the thread itself, read by its own signal handler;
 * t_chaining: this thread's handler is inside a previous handler. */
static _Thread_local sigjmp_buf *volatile t_jump SL_TLS_IE;
static _Thread_local const char *volatile t_lo SL_TLS_IE,
    *volatile t_hi SL_TLS_IE;
static _Thread_local const char *volatile t_fault SL_TLS_IE;
static _Thread_local volatile sig_atomic_t t_chaining SL_TLS_IE;

/* The handlers sluice's replaced: [0] the one before sluice's first
 * install, [k] the one found on top at the kth install after it. Each is
 * written once, under g_lock, before g_nprev publishes it, so the handler
 * reads them without a lock (and without a torn struct). Past
 * GUARD_REINSTALLS, sluice's is not put back on top: sl_guard_ready then
 * says false and readers use pread. */
enum { GUARD_REINSTALLS = 16 };
static struct sigaction g_prev[GUARD_REINSTALLS];
static atomic_int g_nprev;

/* Calls the handler h for a SIGBUS that is not sluice's; false when it is
 * the default (or ignore). A handler with SA_RESETHAND or without
 * SA_NODEFER sees those flags ignored. */
static bool chain(const struct sigaction *h, int sig, siginfo_t *si, void *uc) {
  if (h->sa_flags & SA_SIGINFO) {
    if (!h->sa_sigaction)
      return false;
    h->sa_sigaction(sig, si, uc);
    return true;
  }
  if (h->sa_handler == SIG_DFL || h->sa_handler == SIG_IGN)
    return false;
  h->sa_handler(sig);
  return true;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  sigjmp_buf *j = t_jump;
  /* Only a fault the kernel raised has a faulting address (si_code > 0:
   * BUS_ADRERR past a file's end, BUS_OBJERR, BUS_MCEERR_*); a SIGBUS sent
   * by kill or sigqueue holds a pid where si_addr would be. */
  const char *a = si && si->si_code > 0 ? (const char *)si->si_addr : NULL;
  if (j && a && a >= t_lo && a < t_hi) {
    t_fault = a;
    t_jump = NULL;
    siglongjmp(*j, 1);
  }
  /* Not sluice's fault: the handler sluice's replaced last. One installed
   * after sluice's that chains to it (faulthandler) was found on top at a
   * reinstall and chains back here: then the one before sluice's first
   * install, which cannot, ends the chain. */
  int n = atomic_load(&g_nprev);
  if (n > 0) {
    const struct sigaction *h = t_chaining ? &g_prev[0] : &g_prev[n - 1];
    sig_atomic_t was = t_chaining;
    t_chaining = 1;
    bool handled = chain(h, sig, si, uc);
    t_chaining = was;
    if (handled)
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
  int n = atomic_load(&g_nprev);
  if (rc == 0 && n < GUARD_REINSTALLS &&
      !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)) {
    g_prev[n] = cur; /* published before sluice's handler can read it */
    atomic_store(&g_nprev, n + 1);
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

/* fn run with faults on [lo, hi) caught; *fault: where one was. */
static bool call_guarded(void (*fn)(void *ctx), void *ctx, const char *lo,
                         const char *hi, const char **fault) {
  sigjmp_buf jb;
  t_lo = lo;
  t_hi = hi;
  if (sigsetjmp(jb, 0)) {
    atomic_signal_fence(memory_order_seq_cst);
    *fault = t_fault;
    sigset_t bus; /* as in sl_guard_copy */
    if (sigemptyset(&bus) == 0 && sigaddset(&bus, SIGBUS) == 0)
      (void)pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
    return false;
  }
  t_jump = &jb;
  atomic_signal_fence(memory_order_seq_cst);
  fn(ctx);
  atomic_signal_fence(memory_order_seq_cst);
  t_jump = NULL;
  return true;
}

bool sl_guard_call(void (*fn)(void *ctx), void *ctx, const void *lo, size_t n,
                   size_t *fault_off) {
  *fault_off = 0;
  const char *fault = lo;
  bool ok = call_guarded(fn, ctx, lo, (const char *)lo + n, &fault);
  *fault_off = (size_t)(fault - (const char *)lo);
  return ok;
}

bool sl_guard_call_any(void (*fn)(void *ctx), void *ctx) {
  const char *fault = NULL;
  return call_guarded(fn, ctx, (const char *)(uintptr_t)1,
                      (const char *)UINTPTR_MAX, &fault);
}
