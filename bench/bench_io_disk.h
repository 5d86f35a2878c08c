/* Helpers shared by bench_io and bench_io_loader: the clock, the page-cache
 * drop, and the disk's own O_DIRECT 1 MiB sequential read rate (one read at
 * a time, and qd in flight with io_uring). Header-only, bench code. */
#ifndef SLUICE_BENCH_IO_DISK_H
#define SLUICE_BENCH_IO_DISK_H

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/io_hints.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench: %s: %s\n", what, msg);
  exit(1);
}

static void drop_cache(int fd) {
  sl_err e = {0};
  if (sl_fadvise_dontneed(fd, 0, 0, &e) != SL_OK)
    die("drop cache", e.msg);
}

/* ---- the disk's own rate: O_DIRECT, 1 MiB, sequential ---- */
static double disk_rate(const char *path, uint64_t size) {
  int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0)
    die(path, strerror(errno));
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, 1 << 20) != 0)
    die("buffer", "out of memory");
  memset(buf, 0, 1 << 20);
  double t0 = now();
  uint64_t done = 0;
  while (done < size) {
    ssize_t r = pread(fd, buf, 1 << 20, (off_t)done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      die("O_DIRECT read", strerror(errno));
    if (r == 0)
      break;
    done += (uint64_t)r;
  }
  double dt = now() - t0;
  free(buf);
  close(fd);
  return (double)done / dt;
}

/* The same with qd 1 MiB reads in flight (io_uring): what the device gives
 * to a reader that keeps it busy. 0 when io_uring is unavailable. */
static double disk_rate_qd(const char *path, uint64_t size, unsigned qd) {
  struct io_uring ring;
  if (io_uring_queue_init(qd, &ring, 0) < 0)
    return 0;
  int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0)
    die(path, strerror(errno));
  uint8_t *buf = NULL;
  if (posix_memalign((void **)&buf, 4096, (size_t)qd << 20) != 0)
    die("buffer", "out of memory");
  memset(buf, 0, (size_t)qd << 20);
  double t0 = now();
  uint64_t next = 0, done = 0;
  unsigned inflight = 0, free_slots = qd;
  unsigned *slots = malloc(qd * sizeof *slots); /* free buffer slots */
  if (!slots)
    die("buffer", "out of memory");
  for (unsigned i = 0; i < qd; i++)
    slots[i] = i;
  for (;;) {
    while (free_slots > 0 && next < size) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      unsigned slot = slots[--free_slots];
      io_uring_prep_read(sqe, fd, buf + ((size_t)slot << 20), 1 << 20, next);
      io_uring_sqe_set_data64(sqe, slot);
      next += 1 << 20;
      inflight++;
    }
    if (inflight == 0)
      break;
    if (io_uring_submit(&ring) < 0)
      die("io_uring_submit", "failed");
    struct io_uring_cqe *cqe;
    int rc = io_uring_wait_cqe(&ring, &cqe);
    if (rc < 0)
      die("io_uring_wait_cqe", strerror(-rc));
    if (cqe->res < 0)
      die("O_DIRECT read", strerror(-cqe->res));
    done += (uint64_t)cqe->res;
    slots[free_slots++] = (unsigned)io_uring_cqe_get_data64(cqe);
    io_uring_cqe_seen(&ring, cqe);
    inflight--;
  }
  double dt = now() - t0;
  io_uring_queue_exit(&ring);
  free(slots);
  free(buf);
  close(fd);
  return (double)done / dt;
}

#endif
