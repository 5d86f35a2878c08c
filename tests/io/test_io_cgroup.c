/* Unit tests of the memory cgroup limit (io/io_cgroup.h) on fixture
 * trees: cgroup v1, v2 with ancestors, hybrid hosts, containers with and
 * without a cgroup namespace, escaped mount points, and files that are
 * missing or hold nonsense (which must read as "no limit", never crash). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_cgroup.h"
#include "tests/support/test_dir.h"

static char g_dir[512];

static void put(const char *rel, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  /* mkdir -p of the parents */
  for (char *s = strchr(p + strlen(g_dir) + 1, '/'); s;
       s = strchr(s + 1, '/')) {
    *s = '\0';
    assert_true(mkdir(p, 0755) == 0 || access(p, F_OK) == 0);
    *s = '/';
  }
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

static int unlink_fixture(const char *rel) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  return unlink(p);
}

/* Writes proc/cgroup and proc/mountinfo (mountinfo's "@" stands for the
 * fixture directory) and returns the limit they give. */
static uint64_t limit_of(const char *cgroup, const char *mountinfo) {
  static char mi[32768];
  char cg[1024], mp[1024];
  size_t n = 0, dir_len = strlen(g_dir);
  for (const char *s = mountinfo; *s; s++) {
    size_t add = *s == '@' ? dir_len : 1;
    assert_true(n + add < sizeof mi);
    memcpy(mi + n, *s == '@' ? g_dir : s, add);
    n += add;
  }
  mi[n] = '\0';
  put("proc/cgroup", cgroup);
  put("proc/mountinfo", mi);
  snprintf(cg, sizeof cg, "%s/proc/cgroup", g_dir);
  snprintf(mp, sizeof mp, "%s/proc/mountinfo", g_dir);
  return sl_io_cgroup_limit_at(cg, mp);
}

static const char *const V1_MOUNTS =
    "31 23 0:28 / @/fs rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / @/fs/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / @/fs/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
    "41 31 0:38 / @/fs/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void v1_group_and_hierarchy(void **state) {
  (void)state;
  put("fs/memory/a/b/memory.limit_in_bytes", "1073741824\n");
  put("fs/memory/a/b/memory.stat", "cache 0\nhierarchical_memory_limit "
                                   "536870912\nhierarchical_memsw_limit 1\n");
  const char *cg = "9:name=systemd:/\n4:memory:/a/b\n1:cpu:/\n0::/\n";
  /* the ancestors' lower limit, through memory.stat */
  assert_int_equal(limit_of(cg, V1_MOUNTS), 536870912);
  put("fs/memory/a/b/memory.stat", "cache 0\n");
  assert_int_equal(limit_of(cg, V1_MOUNTS), 1073741824);
  /* "unlimited" */
  put("fs/memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
  put("fs/memory/a/b/memory.stat",
      "hierarchical_memory_limit 9223372036854771712\n");
  assert_int_equal(limit_of(cg, V1_MOUNTS), 0);
  /* the memory controller on a line of its own or with others */
  put("fs/memory/c/memory.limit_in_bytes", "65536\n");
  assert_int_equal(limit_of("3:cpu,memory:/c\n",
                            "35 31 0:32 / @/fs/memory rw - cgroup cgroup "
                            "rw,cpu,memory\n"),
                   65536);
  /* no mount of the memory controller: nothing to read */
  assert_int_equal(limit_of("4:memory:/c\n", "32 31 0:29 / @/fs/cpu rw - "
                                             "cgroup cgroup rw,cpu\n"),
                   0);
}

static void v2_ancestors(void **state) {
  (void)state;
  const char *mounts = "30 1 0:26 / @/v2 rw,nosuid - cgroup2 cgroup2 "
                       "rw,nsdelegate,memory_recursiveprot\n";
  put("v2/x/y/memory.max", "max\n");
  put("v2/x/memory.max", "268435456\n");
  put("v2/memory.max", "max\n");
  /* a group's memory.max does not include its parent's */
  assert_int_equal(limit_of("0::/x/y\n", mounts), 268435456);
  put("v2/x/y/memory.max", "1048576\n");
  assert_int_equal(limit_of("0::/x/y\n", mounts), 1048576);
  put("v2/x/y/memory.max", "max\n");
  put("v2/x/memory.max", "max\n");
  assert_int_equal(limit_of("0::/x/y\n", mounts), 0);
  /* the root group */
  assert_int_equal(limit_of("0::/\n", mounts), 0);
  /* the walk stops at the mount point: a memory.max above it is not the
   * hierarchy's */
  put("memory.max", "4096\n");
  assert_int_equal(limit_of("0::/x/y\n", mounts), 0);
  assert_int_equal(unlink_fixture("memory.max"), 0);
}

static void hybrid_takes_the_lower(void **state) {
  (void)state;
  put("h/memory/g/memory.limit_in_bytes", "2147483648\n");
  put("h/unified/g/memory.max", "1073741824\n");
  const char *mounts = "35 31 0:32 / @/h/memory rw - cgroup cgroup rw,memory\n"
                       "41 31 0:38 / @/h/unified rw - cgroup2 cgroup2 rw\n";
  assert_int_equal(limit_of("4:memory:/g\n0::/g\n", mounts), 1073741824);
  put("h/unified/g/memory.max", "max\n");
  assert_int_equal(limit_of("4:memory:/g\n0::/g\n", mounts), 2147483648);
}

static void containers(void **state) {
  (void)state;
  /* v1 without a cgroup namespace: /proc/self/cgroup names the host's path
   * and the mount shows that group as its root */
  put("c1/memory.limit_in_bytes", "33554432\n");
  assert_int_equal(limit_of("5:memory:/docker/abc\n",
                            "40 30 0:40 /docker/abc @/c1 ro - cgroup cgroup "
                            "rw,memory\n"),
                   33554432);
  /* a group below the mount's root is read below the mount point */
  put("c1/sub/memory.limit_in_bytes", "4194304\n");
  assert_int_equal(limit_of("5:memory:/docker/abc/sub\n",
                            "40 30 0:40 /docker/abc @/c1 ro - cgroup cgroup "
                            "rw,memory\n"),
                   4194304);
  /* "/docker/abcdef" is not below "/docker/abc": a group beside the root
   * is read at the mount point, not at "@/c1def" */
  put("c1def/memory.limit_in_bytes", "2097152\n");
  assert_int_equal(limit_of("5:memory:/docker/abcdef\n",
                            "40 30 0:40 /docker/abc @/c1 ro - cgroup cgroup "
                            "rw,memory\n"),
                   33554432);
  /* a path that climbs out of the namespace is not followed */
  put("x/memory.limit_in_bytes", "1048576\n");
  assert_int_equal(limit_of("5:memory:/../x\n", "40 30 0:40 / @/c1 ro - "
                                                "cgroup cgroup rw,memory\n"),
                   33554432);
  /* a group outside the mount's root is read at the mount point */
  assert_int_equal(limit_of("5:memory:/elsewhere\n",
                            "40 30 0:40 /docker/abc @/c1 ro - cgroup cgroup "
                            "rw,memory\n"),
                   33554432);
  /* v2 with a cgroup namespace: the group is "/" and the mount point holds
   * the container's own memory.max */
  put("c2/memory.max", "16777216\n");
  assert_int_equal(limit_of("0::/\n", "50 40 0:27 / @/c2 ro - cgroup2 "
                                      "cgroup2 rw\n"),
                   16777216);
  /* a mount point with a space, escaped as \040 in mountinfo */
  put("with space/memory.max", "8388608\n");
  assert_int_equal(limit_of("0::/\n", "50 40 0:27 / @/with\\040space ro - "
                                      "cgroup2 cgroup2 rw\n"),
                   8388608);
}

/* A line longer than the parser's buffer is skipped whole: its tail is not
 * read as a line of its own, even when it looks like one. */
static void long_lines(void **state) {
  (void)state;
  put("real/g/memory.max", "65536\n");
  put("fake/g/memory.max", "4096\n");
  put("real/fake/memory.max", "4096\n");
  /* mountinfo: read with a 4096-byte buffer, so 4095 bytes a piece */
  static char mi[16384];
  size_t n = (size_t)snprintf(mi, sizeof mi, "%s",
                              "99 1 0:99 / /overlay rw - "
                              "overlay overlay rw,");
  memset(mi + n, 'o', 4095 - n);
  snprintf(mi + 4095, sizeof mi - 4095,
           "30 1 0:26 / @/fake rw - cgroup2 cgroup2 rw\n"
           "31 1 0:27 / @/real rw - cgroup2 cgroup2 rw\n");
  assert_int_equal(limit_of("0::/g\n", mi), 65536);
  /* /proc/self/cgroup: read with a 1024-byte buffer */
  static char cg[4096];
  n = (size_t)snprintf(cg, sizeof cg, "%s", "0::/g\n1:name=x:/");
  size_t first = strlen("0::/g\n");
  memset(cg + n, 'a', first + 1023 - n);
  snprintf(cg + first + 1023, sizeof cg - first - 1023, "0::/fake\n");
  assert_int_equal(limit_of(cg, "31 1 0:27 / @/real rw - cgroup2 cgroup2 "
                                "rw\n"),
                   65536);
}

static void nonsense_reads_as_no_limit(void **state) {
  (void)state;
  const char *mounts = "30 1 0:26 / @/n rw - cgroup2 cgroup2 rw\n";
  static const char *const values[] = {"",
                                       "\n",
                                       "-1\n",
                                       "12abc\n",
                                       "max\n",
                                       "0\n",
                                       "99999999999999999999999\n",
                                       " 5\n"};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    put("n/g/memory.max", values[i]);
    assert_int_equal(limit_of("0::/g\n", mounts), 0);
  }
  put("n/g/memory.max", "4096\n");
  static const char *const cgroups[] = {
      "",     "\n",    "garbage\n",  "0:/g\n",          "0::g\n",
      "::\n", "0::\n", "1:memory\n", "x:memory:/g\n:\n"};
  for (size_t i = 0; i < sizeof cgroups / sizeof *cgroups; i++)
    assert_int_equal(limit_of(cgroups[i], mounts), 0);
  static const char *const mountinfos[] = {
      "",
      "\n",
      "-\n",
      "30 1 0:26 / @/n rw -\n",
      "30 1 0:26 / @/n rw - \n",
      "30 - cgroup2\n",
      "30 1 0:26 / @/n rw - cgroup cgroup rw,memory\n"};
  for (size_t i = 0; i < sizeof mountinfos / sizeof *mountinfos; i++)
    assert_int_equal(limit_of("0::/g\n", mountinfos[i]), 0);
  assert_int_equal(limit_of("0::/g\n", mounts), 4096); /* and it does read */
  /* missing files */
  char none[600];
  snprintf(none, sizeof none, "%s/missing", g_dir);
  assert_int_equal(sl_io_cgroup_limit_at(none, none), 0);
  /* a path longer than any buffer */
  char longcg[3000] = "0::";
  memset(longcg + 3, 'a', sizeof longcg - 5);
  longcg[3] = '/';
  longcg[sizeof longcg - 2] = '\n';
  assert_int_equal(limit_of(longcg, mounts), 0);
}

int main(void) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/io_cgroup_XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror(g_dir);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v1_group_and_hierarchy),
      cmocka_unit_test(v2_ancestors),
      cmocka_unit_test(hybrid_takes_the_lower),
      cmocka_unit_test(containers),
      cmocka_unit_test(long_lines),
      cmocka_unit_test(nonsense_reads_as_no_limit),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (sl_test_remove_dir(g_dir) != 0)
    fprintf(stderr, "could not remove %s\n", g_dir);
  return rc;
}
