/* What the test files that work in a scratch folder share: making it,
 * removing it at the end, and running the Python script that makes their
 * fixtures. Header-only.
 *
 * Thread safety: call from the test's main thread (system()). */
#ifndef SLUICE_TESTS_SUPPORT_TEST_DIR_H
#define SLUICE_TESTS_SUPPORT_TEST_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names this process's scratch folder, $SLUICE_TEST_TMP/NAME-PID (/tmp
 * without that variable), into dir and makes it. Returns 0, or -1 (the
 * name is too long for cap, or mkdir failed). */
static inline int sl_test_make_dir(char *dir, size_t cap, const char *name) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  if ((size_t)snprintf(dir, cap, "%s/%s-%ld", tmp ? tmp : "/tmp", name,
                       (long)getpid()) >= cap)
    return -1;
  return mkdir(dir, 0755) == 0 ? 0 : -1;
}

/* rm -rf dir (a path without single quotes). Returns 0, or -1. */
static inline int sl_test_remove_dir(const char *dir) {
  char cmd[1200];
  if ((size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= sizeof cmd)
    return -1;
  return system(cmd) == 0 ? 0 : -1;
}

/* Runs `'python' 'script' args` (args already quoted) to make test's
 * fixtures. On failure says on stderr which command failed and what the
 * script needs (Debian packages for that Python: scripts/deps.sh installs
 * them). Returns 0, or -1. */
static inline int sl_test_make_fixtures(const char *test, const char *python,
                                        const char *script, const char *args,
                                        const char *needs) {
  char cmd[4096];
  if ((size_t)snprintf(cmd, sizeof cmd, "'%s' '%s' %s", python, script, args) >=
      sizeof cmd)
    return -1;
  if (system(cmd) != 0) {
    fprintf(stderr,
            "%s: %s failed: the fixtures need Debian's %s for %s "
            "(scripts/deps.sh installs them)\n",
            test, cmd, needs, python);
    return -1;
  }
  return 0;
}

#endif
