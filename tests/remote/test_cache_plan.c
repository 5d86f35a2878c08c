/* remote/cache.h's plan: objects fetched ahead (sl_cache_ahead) never
 * evict one wanted sooner, done ones go first, then the one used furthest
 * ahead; a reader's get evicts past its position; cancel leaves no partial
 * download; the bound holds throughout. The objects are served by Python's
 * http.server on a loopback port (a real server, started and stopped
 * here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/core/crc32c.h"
#include "remote/cache.h"

#define NOBJ 4
#define OBJ_BYTES 100000u

typedef struct fixture {
  char dir[400], www[512], cache[512];
  pid_t server;
  int port;
  char url[NOBJ][600];
  uint32_t crc[NOBJ];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(f->dir, sizeof f->dir, "%s/cache_plan.XXXXXX", tmp ? tmp : "/tmp");
  if (!mkdtemp(f->dir))
    return -1;
  snprintf(f->www, sizeof f->www, "%s/www", f->dir);
  snprintf(f->cache, sizeof f->cache, "%s/cache", f->dir);
  if (mkdir(f->www, 0700) != 0)
    return -1;
  uint8_t *buf = malloc(OBJ_BYTES);
  for (int k = 0; k < NOBJ; k++) {
    for (uint32_t i = 0; i < OBJ_BYTES; i++)
      buf[i] = (uint8_t)(i * 31 + k * 7 + (i >> 8));
    char p[600];
    snprintf(p, sizeof p, "%s/o%d", f->www, k);
    FILE *fp = fopen(p, "wb");
    if (!fp || fwrite(buf, 1, OBJ_BYTES, fp) != OBJ_BYTES || fclose(fp) != 0)
      return -1;
    f->crc[k] = sl_crc32c_update(0, buf, OBJ_BYTES);
  }
  free(buf);
  /* The server says its port on its first line. */
  int out[2];
  if (pipe(out) != 0)
    return -1;
  f->server = fork();
  if (f->server == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execlp("python3", "python3", "-u", "-m", "http.server", "0", "--bind",
           "127.0.0.1", "--directory", f->www, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  FILE *fp = fdopen(out[0], "r");
  char line[256] = "";
  if (!fp || !fgets(line, sizeof line, fp))
    f->port = 0;
  else {
    const char *at = strstr(line, "port ");
    f->port = at ? atoi(at + 5) : 0;
  }
  if (fp)
    fclose(fp); /* the server's later lines go nowhere: it keeps serving */
  for (int k = 0; k < NOBJ; k++)
    snprintf(f->url[k], sizeof f->url[k], "http://127.0.0.1:%d/o%d", f->port,
             k);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->server > 0) {
    kill(f->server, SIGTERM);
    waitpid(f->server, NULL, 0);
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", f->dir);
  free(f);
  return 0;
}

static uint64_t folder_bytes(const char *dir, int *tmps) {
  DIR *d = opendir(dir);
  uint64_t sum = 0;
  *tmps = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    bool tmp = !strncmp(e->d_name, ".tmp.", 5);
    if (!tmp && !(n > 4 && !strcmp(e->d_name + n - 4, ".obj")))
      continue;
    char p[1024];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (stat(p, &sb) == 0)
      sum += (uint64_t)sb.st_size;
    *tmps += tmp;
  }
  if (d)
    closedir(d);
  return sum;
}

static void test_plan(void **state) {
  fixture *f = *state;
  if (f->port == 0)
    skip();
  sl_fetch_conf conf = {.retries = 1, .deadline_s = 20, .stall_s = 5};
  sl_cache *c;
  sl_err err = {0};
  uint64_t bound = OBJ_BYTES * 5 / 2; /* two objects and a half */
  assert_int_equal(
      sl_cache_open(&c, f->cache, bound, &conf, sl_crc32c_update, &err), SL_OK);
  assert_int_equal(sl_cache_plan_open(c, NOBJ, &err), SL_OK);
  for (int k = 0; k < NOBJ; k++)
    sl_cache_plan_object(c, (size_t)k, f->url[k], OBJ_BYTES, f->crc[k]);
  sl_cache_plan_sort(c);
  for (int k = 0; k < NOBJ; k++)
    sl_cache_plan_next(c, (size_t)k, 10u * (unsigned)k);
  bool no_room;
  int tmps;
#define AHEAD(k, when)                                                         \
  assert_int_equal(sl_cache_ahead(c, f->url[k], OBJ_BYTES, f->crc[k], when,    \
                                  &no_room, &err),                             \
                   SL_OK)
#define HAS(k) sl_cache_has(c, f->url[k], OBJ_BYTES, f->crc[k])
  AHEAD(0, 0);
  AHEAD(1, 10);
  assert_false(no_room);
  assert_true(HAS(0) && HAS(1));
  /* Both cached objects are wanted before o2: no room, nothing fetched. */
  AHEAD(2, 20);
  assert_true(no_room);
  assert_false(HAS(2));
  /* o0 done: it goes, o2 comes. */
  sl_cache_plan_next(c, 0, SL_CACHE_DONE);
  AHEAD(2, 20);
  assert_false(no_room);
  assert_true(!HAS(0) && HAS(1) && HAS(2));
  /* o3 at 30: both held are wanted sooner. */
  AHEAD(3, 30);
  assert_true(no_room);
  /* o2 moved past o3: the furthest goes. */
  sl_cache_plan_next(c, 2, 40);
  AHEAD(3, 30);
  assert_false(no_room);
  assert_true(HAS(1) && !HAS(2) && HAS(3));
  assert_true(folder_bytes(f->cache, &tmps) <= bound);
  /* A reader at position 10 wants o0 now: o3 (at 30) goes, not o1. */
  sl_cache_plan_now(c, 10);
  sl_cache_plan_next(c, 0, 10);
  int fd = -1;
  assert_int_equal(sl_cache_get(c, f->url[0], OBJ_BYTES, f->crc[0], &fd, &err),
                   SL_OK);
  assert_true(fd >= 0);
  close(fd);
  assert_true(HAS(0) && HAS(1) && !HAS(3));
  /* Cached: a hit, no fetch. */
  assert_int_equal(sl_cache_get(c, f->url[1], OBJ_BYTES, f->crc[1], &fd, &err),
                   SL_OK);
  close(fd);
  sl_cache_stats st;
  sl_cache_stats_get(c, &st);
  assert_int_equal(st.fetches, 5);
  assert_int_equal(st.ahead, 4);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.bytes_fetched, 5ull * OBJ_BYTES);
  assert_int_equal(st.evictions, 3);
  /* Cancelled: the fetch ends with SL_ESTATE and leaves nothing. */
  sl_cache_plan_next(c, 0, SL_CACHE_DONE);
  sl_cache_cancel(c, true);
  assert_int_equal(
      sl_cache_ahead(c, f->url[2], OBJ_BYTES, f->crc[2], 20, &no_room, &err),
      SL_ESTATE);
  assert_false(HAS(2));
  assert_true(folder_bytes(f->cache, &tmps) <= bound);
  assert_int_equal(tmps, 0);
  sl_cache_cancel(c, false);
  AHEAD(2, 20);
  assert_true(HAS(2));
  uint64_t bytes, objects;
  assert_int_equal(sl_cache_usage(c, &bytes, &objects, &err), SL_OK);
  assert_int_equal(objects, 2);
  assert_int_equal(bytes, 2ull * OBJ_BYTES);
  sl_cache_close(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
