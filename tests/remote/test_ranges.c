/* remote/ranges.h: samples read by HTTP range requests, many in flight,
 * against nginx on a loopback port (a real server that serves ranges,
 * started and stopped here; the tests skip without nginx). Workers on
 * several threads get each position's bytes, equal to the object's; a
 * small pool and one request in flight still give every position; stop
 * mid-epoch and a new start read everything again; a missing object and
 * an object of another size are errors naming the URL and the sample. The
 * Content-Range parser, without a server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote/ranges.h"
#include "remote/url.h"

#define NOBJ 4
#define OBJ_BYTES 100000u
#define NSAMPLES 600

typedef struct fixture {
  char dir[400];
  pid_t server;
  int port;
  char url[NOBJ + 1][128]; /* the last: an object the server lacks */
  uint64_t size[NOBJ + 1];
  sl_fetch_conf conf;
} fixture;

static uint8_t byte_at(size_t obj, uint64_t i) {
  return (uint8_t)(i * 31 + obj * 7 + (i >> 8));
}

static const char *nginx_path(void) {
  static const char *const where[] = {"/usr/sbin/nginx", "/usr/bin/nginx",
                                      "/usr/local/sbin/nginx"};
  for (size_t k = 0; k < sizeof where / sizeof *where; k++)
    if (access(where[k], X_OK) == 0)
      return where[k];
  return NULL;
}

static int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(s, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (s >= 0)
    close(s);
  return port;
}

static bool answers(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
  if (s >= 0)
    close(s);
  return ok;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  *state = f;
  const char *nginx = nginx_path();
  if (!f || !nginx)
    return 0; /* each test skips */
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(f->dir, sizeof f->dir, "%s/ranges.XXXXXX", tmp ? tmp : "/tmp");
  if (!mkdtemp(f->dir))
    return -1;
  char p[600];
  snprintf(p, sizeof p, "%s/www", f->dir);
  if (mkdir(p, 0700) != 0)
    return -1;
  snprintf(p, sizeof p, "%s/tmp", f->dir);
  if (mkdir(p, 0700) != 0)
    return -1;
  uint8_t *buf = malloc(OBJ_BYTES);
  for (size_t k = 0; k < NOBJ; k++) {
    for (uint32_t i = 0; i < OBJ_BYTES; i++)
      buf[i] = byte_at(k, i);
    snprintf(p, sizeof p, "%s/www/o%zu", f->dir, k);
    FILE *fp = fopen(p, "wb");
    if (!fp || fwrite(buf, 1, OBJ_BYTES, fp) != OBJ_BYTES || fclose(fp) != 0)
      return -1;
  }
  free(buf);
  f->port = free_port();
  snprintf(p, sizeof p, "%s/nginx.conf", f->dir);
  FILE *fp = fopen(p, "w");
  if (!fp)
    return -1;
  fprintf(fp,
          "%sdaemon off; worker_processes 1; pid %s/nginx.pid;\n"
          "error_log %s/error.log;\nevents { worker_connections 256; }\n"
          "http { access_log off; client_body_temp_path %s/tmp;\n"
          "proxy_temp_path %s/tmp; fastcgi_temp_path %s/tmp;\n"
          "uwsgi_temp_path %s/tmp; scgi_temp_path %s/tmp;\n"
          "server { listen 127.0.0.1:%d; root %s/www; } }\n",
          geteuid() == 0 ? "user root; " : "", f->dir, f->dir, f->dir, f->dir,
          f->dir, f->dir, f->dir, f->port, f->dir);
  if (fclose(fp) != 0)
    return -1;
  f->server = fork();
  if (f->server == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    execl(nginx, nginx, "-p", f->dir, "-c", p, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200 && !answers(f->port); i++) {
    struct timespec t = {0, 100000000};
    nanosleep(&t, NULL);
  }
  if (!answers(f->port))
    return -1;
  for (size_t k = 0; k <= NOBJ; k++) {
    snprintf(f->url[k], sizeof f->url[k], "http://127.0.0.1:%d/o%zu", f->port,
             k);
    f->size[k] = OBJ_BYTES;
  }
  f->conf = (sl_fetch_conf){.retries = 2, .deadline_s = 30, .stall_s = 30};
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f && f->server > 0) {
    kill(f->server, SIGTERM);
    waitpid(f->server, NULL, 0);
  }
  if (f && f->dir[0]) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", f->dir);
  }
  free(f);
  return 0;
}

#define NEED_SERVER(f)                                                         \
  do {                                                                         \
    if (!(f)->server)                                                          \
      skip();                                                                  \
  } while (0)

/* Sample i: a range of object i % NOBJ (or of the missing object, when
 * `missing` says which sample). */
typedef struct layout {
  const fixture *f;
  long missing; /* -1: none */
} layout;

static bool locate(const void *ctx, uint64_t i, size_t *obj, uint64_t *off,
                   uint32_t *len) {
  const layout *l = ctx;
  *obj = (long)i == l->missing ? NOBJ : (size_t)(i % NOBJ);
  *len = 1 + (uint32_t)((i * 7919) % 5000);
  *off = (i * 104729) % (OBJ_BYTES - *len);
  return true;
}

static void object(const void *ctx, size_t k, const char **url,
                   uint64_t *size) {
  const layout *l = ctx;
  *url = l->f->url[k];
  *size = l->f->size[k];
}

/* A permutation: position p reads sample (p * 37) % NSAMPLES. */
static uint64_t order(const void *ctx, uint64_t p) {
  (void)ctx;
  return (p * 37) % NSAMPLES;
}

static bool bytes_right(const layout *l, uint64_t sample, const uint8_t *d,
                        size_t n) {
  size_t obj;
  uint64_t off;
  uint32_t len;
  locate(l, sample, &obj, &off, &len);
  if (n != len)
    return false;
  for (size_t i = 0; i < n; i++)
    if (d[i] != byte_at(obj, off + i))
      return false;
  return true;
}

typedef struct workers {
  sl_ranges *r;
  const layout *l;
  atomic_uint_fast64_t next;
  uint64_t end;
  atomic_int wrong, failed;
} workers;

static void *worker(void *arg) {
  workers *w = arg;
  for (;;) {
    uint64_t p = atomic_fetch_add(&w->next, 1);
    if (p >= w->end)
      return NULL;
    const uint8_t *d;
    size_t n;
    sl_err err = {0};
    if (sl_ranges_get(w->r, p, &d, &n, &err) != SL_OK)
      atomic_fetch_add(&w->failed, 1);
    else if (!bytes_right(w->l, order(NULL, p), d, n))
      atomic_fetch_add(&w->wrong, 1);
    sl_ranges_put(w->r, p);
  }
}

static sl_ranges *open_ranges(const fixture *f, const layout *l,
                              unsigned requests, size_t pool) {
  sl_ranges_opts o = {.conf = &f->conf,
                      .name = "test set",
                      .requests = requests,
                      .pool_bytes = pool,
                      .max_length = 5000,
                      .locate = locate,
                      .object = object,
                      .ctx = l};
  sl_ranges *r = NULL;
  sl_err err = {0};
  assert_int_equal(sl_ranges_open(&r, &o, &err), SL_OK);
  return r;
}

static void read_epoch(sl_ranges *r, const layout *l, int threads) {
  sl_err err = {0};
  assert_int_equal(sl_ranges_start(r, order, NULL, 0, NSAMPLES, &err), SL_OK);
  workers w = {.r = r, .l = l, .end = NSAMPLES};
  pthread_t t[4];
  for (int k = 0; k < threads; k++)
    assert_int_equal(pthread_create(&t[k], NULL, worker, &w), 0);
  for (int k = 0; k < threads; k++)
    pthread_join(t[k], NULL);
  assert_int_equal(atomic_load(&w.failed), 0);
  assert_int_equal(atomic_load(&w.wrong), 0);
}

static void test_workers_get_the_objects_bytes(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, -1};
  sl_ranges *r = open_ranges(f, &l, 16, 1u << 20);
  read_epoch(r, &l, 3);
  read_epoch(r, &l, 1); /* a second epoch on the same engine */
  sl_ranges_stats st;
  sl_ranges_stats_get(r, &st);
  assert_int_equal(st.requests, 2 * NSAMPLES);
  assert_int_equal(st.retries, 0);
  sl_ranges_close(r);
}

static void test_one_request_and_a_small_pool(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, -1};
  /* Room for about three of the largest samples: the thread waits for
   * puts. */
  sl_ranges *r = open_ranges(f, &l, 1, 16384);
  read_epoch(r, &l, 2);
  sl_ranges_close(r);
  sl_ranges_opts o = {.conf = &f->conf,
                      .name = "test set",
                      .requests = 4,
                      .pool_bytes = 4096,
                      .max_length = 5000,
                      .locate = locate,
                      .object = object,
                      .ctx = &l};
  sl_err err = {0};
  assert_int_equal(sl_ranges_open(&r, &o, &err), SL_ECONFIG);
  assert_non_null(strstr(err.msg, "io.pool_size"));
  o.pool_bytes = 1 << 20;
  o.requests = 0;
  assert_int_equal(sl_ranges_open(&r, &o, &err), SL_ECONFIG);
}

static void test_stop_mid_epoch_then_start(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, -1};
  sl_ranges *r = open_ranges(f, &l, 32, 1u << 20);
  sl_err err = {0};
  assert_int_equal(sl_ranges_start(r, order, NULL, 0, NSAMPLES, &err), SL_OK);
  const uint8_t *d;
  size_t n;
  assert_int_equal(sl_ranges_get(r, 0, &d, &n, &err), SL_OK);
  assert_true(bytes_right(&l, order(NULL, 0), d, n));
  sl_ranges_put(r, 0);
  sl_ranges_stop(r); /* requests for the next positions are in flight */
  assert_int_equal(sl_ranges_get(r, 1, &d, &n, &err), SL_ESTATE);
  read_epoch(r, &l, 2);
  sl_ranges_close(r);
  /* Closed with an epoch running and nothing put. */
  r = open_ranges(f, &l, 8, 1u << 20);
  assert_int_equal(sl_ranges_start(r, order, NULL, 0, NSAMPLES, &err), SL_OK);
  sl_ranges_close(r);
}

static void test_missing_object_is_named(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, 5};
  sl_ranges *r = open_ranges(f, &l, 8, 1u << 20);
  sl_err err = {0};
  uint64_t pos = 0; /* the position of sample 5 */
  while (order(NULL, pos) != 5)
    pos++;
  assert_int_equal(sl_ranges_start(r, order, NULL, 0, NSAMPLES, &err), SL_OK);
  for (uint64_t p = 0; p <= pos; p++) {
    const uint8_t *d;
    size_t n;
    sl_status st = sl_ranges_get(r, p, &d, &n, &err);
    sl_ranges_put(r, p);
    if (p < pos)
      assert_int_equal(st, SL_OK);
    else
      assert_int_equal(st, SL_EIO);
  }
  assert_non_null(strstr(err.msg, f->url[NOBJ]));
  assert_non_null(strstr(err.msg, "HTTP 404 (no such object)"));
  assert_non_null(strstr(err.msg, "sample 5"));
  sl_ranges_close(r);
}

static void test_object_of_another_size_is_named(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, -1};
  f->size[2] = OBJ_BYTES + 1; /* what an index made before a change says */
  sl_ranges *r = open_ranges(f, &l, 8, 1u << 20);
  sl_err err = {0};
  uint64_t pos = 0;
  while (order(NULL, pos) % NOBJ != 2)
    pos++;
  assert_int_equal(sl_ranges_start(r, order, NULL, 0, NSAMPLES, &err), SL_OK);
  sl_status st = SL_OK;
  for (uint64_t p = 0; p <= pos; p++) {
    const uint8_t *d;
    size_t n;
    st = sl_ranges_get(r, p, &d, &n, &err);
    sl_ranges_put(r, p);
  }
  f->size[2] = OBJ_BYTES;
  assert_int_equal(st, SL_EIO);
  assert_non_null(strstr(err.msg, f->url[2]));
  assert_non_null(strstr(err.msg, "changed since it was indexed"));
  sl_ranges_close(r);
}

static void test_read_outside_the_order(void **state) {
  fixture *f = *state;
  NEED_SERVER(f);
  layout l = {f, 9};
  sl_ranges *r = open_ranges(f, &l, 2, 1u << 20);
  uint8_t buf[5000];
  const uint8_t *d;
  size_t n;
  sl_err err = {0};
  assert_int_equal(sl_ranges_read(r, 17, buf, sizeof buf, &d, &n, &err), SL_OK);
  assert_ptr_equal(d, buf);
  assert_true(bytes_right(&l, 17, d, n));
  assert_int_equal(sl_ranges_read(r, 9, buf, sizeof buf, &d, &n, &err), SL_EIO);
  assert_non_null(strstr(err.msg, "404"));
  assert_non_null(strstr(err.msg, "sample 9"));
  assert_int_equal(sl_ranges_read(r, 17, buf, 10, &d, &n, &err), SL_ETOOBIG);
  sl_ranges_close(r);
}

static void test_content_range(void **state) {
  (void)state;
  uint64_t a, b, t;
  const char *ok = "Content-Range: bytes 0-99/1234\r\n";
  assert_true(sl_http_content_range(ok, strlen(ok), &a, &b, &t));
  assert_true(a == 0 && b == 99 && t == 1234);
  const char *star = "content-range:bytes 5-5/*";
  assert_true(sl_http_content_range(star, strlen(star), &a, &b, &t));
  assert_true(a == 5 && b == 5 && t == UINT64_MAX);
  const char *bad[] = {"Content-Range: bytes 10-9/100",
                       "Content-Range: bytes 0-100/100",
                       "Content-Range: items 0-1/2",
                       "Content-Length: 12",
                       "Content-Range: bytes 0-1/2 junk",
                       "Content-Range: bytes -1/2",
                       "Content-Range: bytes 0-99999999999999999999/1",
                       "Content-Range: bytes"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
    assert_false(sl_http_content_range(bad[k], strlen(bad[k]), &a, &b, &t));
  /* Not NUL-terminated: only len bytes are read. */
  assert_true(sl_http_content_range(ok, 30, &a, &b, &t) && t == 1234);
  assert_false(sl_http_content_range(ok, 29, &a, &b, &t) && t == 1234);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_content_range),
      cmocka_unit_test(test_workers_get_the_objects_bytes),
      cmocka_unit_test(test_one_request_and_a_small_pool),
      cmocka_unit_test(test_stop_mid_epoch_then_start),
      cmocka_unit_test(test_missing_object_is_named),
      cmocka_unit_test(test_object_of_another_size_is_named),
      cmocka_unit_test(test_read_outside_the_order),
  };
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, setup, teardown);
}
