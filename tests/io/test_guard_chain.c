/* The SIGBUS guard's chain (common/map_guard.c, issue 25), in a process of its
 * own (no test harness's SIGBUS handler underneath): sluice installs its
 * handler; then the application installs one that chains to the handler it
 * found (sluice's, as Python's faulthandler does); then another mmap reader
 * opens and sluice goes back on top. A SIGBUS that is not sluice's (a page
 * of a truncated mapping touched outside any guarded copy) must reach the
 * application's handler once and then kill the process with SIGBUS, as it
 * would without sluice: before, the reinstall stored the application's
 * handler as sluice's previous one, and the two called each other until
 * the stack ran out.
 *
 * The child counts the application handler's calls down a pipe; the parent
 * checks the count (1) and how the child died (SIGBUS). Exit 0: pass. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/map_guard.h"

static struct sigaction g_app_prev; /* what the application's handler found */
static int g_pipe = -1;
static volatile sig_atomic_t g_calls;

static void app_handler(int sig, siginfo_t *si, void *uc) {
  if (write(g_pipe, "x", 1) != 1)
    _exit(3);
  if (++g_calls > 64)
    _exit(42); /* the handlers call each other: a cycle */
  if ((g_app_prev.sa_flags & SA_SIGINFO) && g_app_prev.sa_sigaction)
    g_app_prev.sa_sigaction(sig, si, uc);
}

static void child(const char *path) {
  /* Before sluice: the default (a sanitizer's runtime may have put its own
   * SIGBUS reporter there, which would end the chain in its report). */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (sigaction(SIGBUS, &dfl, NULL) != 0)
    _exit(11);
  sl_err err = {0};
  if (sl_guard_install(&err) != SL_OK)
    _exit(4);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = app_handler;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, &g_app_prev) != 0)
    _exit(5);
  if (sl_guard_ready())
    _exit(6); /* replaced: sluice must see it */
  if (sl_guard_install(&err) != SL_OK || !sl_guard_ready())
    _exit(7); /* a second reader's open: back on top */
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  long page = sysconf(_SC_PAGESIZE);
  if (fd < 0 || ftruncate(fd, 2 * page) != 0)
    _exit(8);
  volatile char *m =
      mmap(NULL, (size_t)(2 * page), PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED || ftruncate(fd, 0) != 0)
    _exit(9);
  char c = m[page]; /* SIGBUS, BUS_ADRERR: not inside a guarded copy */
  (void)c;
  _exit(10); /* the fault did not kill the process */
}

int main(void) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char path[512];
  snprintf(path, sizeof path, "%s/guard-chain-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  int fds[2];
  if (pipe(fds) != 0) {
    perror("test_guard_chain: pipe");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("test_guard_chain: fork");
    return 1;
  }
  if (pid == 0) {
    close(fds[0]);
    g_pipe = fds[1];
    child(path);
  }
  close(fds[1]);
  int calls = 0;
  char buf[64];
  ssize_t r;
  while ((r = read(fds[0], buf, sizeof buf)) > 0)
    calls += (int)r;
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    perror("test_guard_chain: waitpid");
    return 1;
  }
  unlink(path);
  bool bus = WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
  printf("test_guard_chain: application handler called %d time(s); child %s "
         "%d\n",
         calls, WIFSIGNALED(status) ? "killed by signal" : "exited with",
         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  if (calls != 1 || !bus) {
    fprintf(stderr, "test_guard_chain: FAILED: expected one call and death "
                    "by SIGBUS (exit 42: the handlers called each other)\n");
    return 1;
  }
  return 0;
}
