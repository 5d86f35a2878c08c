/* Progress display: see tools/pack/pack_progress.h. */
#include "tools/pack/pack_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double sl_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sl_progress_init(sl_progress *p, uint64_t total, const char *what,
                      sl_progress_mode mode) {
  p->tty = isatty(STDERR_FILENO) == 1;
  p->mode = mode;
  p->drawn = false;
  p->start = p->last = sl_now();
  p->total = total;
  p->what = what;
}

static void eta_text(char *buf, size_t cap, double secs) {
  if (secs < 0 || secs > 360000) {
    snprintf(buf, cap, "--:--");
    return;
  }
  long s = (long)(secs + 0.5);
  if (s >= 3600)
    snprintf(buf, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(buf, cap, "%ld:%02ld", s / 60, s % 60);
}

void sl_progress_update(sl_progress *p, uint64_t done, uint64_t bytes,
                        bool force) {
  if (p->mode == SL_PROGRESS_NONE)
    return;
  double now = sl_now();
  double every = p->mode == SL_PROGRESS_LINES ? 0.25 : p->tty ? 0.1 : 5.0;
  if (!force && now - p->last < every)
    return;
  p->last = now;
  if (p->mode == SL_PROGRESS_LINES) {
    fprintf(stderr, "progress %llu %llu %llu\n", (unsigned long long)done,
            (unsigned long long)p->total, (unsigned long long)bytes);
    fflush(stderr);
    return;
  }
  double el = now - p->start > 1e-6 ? now - p->start : 1e-6;
  double rate = (double)done / el, mbs = (double)bytes / el / 1e6;
  double pct = p->total ? 100.0 * (double)done / (double)p->total : 100.0;
  char eta[32];
  eta_text(eta, sizeof eta, rate > 0 ? (double)(p->total - done) / rate : -1.0);
  if (p->tty) {
    enum { W = 30 };
    char bar[W + 1];
    int fill = (int)(pct / 100.0 * W);
    for (int i = 0; i < W; i++)
      bar[i] = i < fill ? '#' : '.';
    bar[W] = '\0';
    fprintf(stderr, "\r[%s] %5.1f%% %llu/%llu %s  %.0f/s  %.1f MB/s  ETA %s ",
            bar, pct, (unsigned long long)done, (unsigned long long)p->total,
            p->what, rate, mbs, eta);
    p->drawn = true;
  } else {
    fprintf(stderr,
            "sluice: %llu/%llu %s (%.0f%%), %.0f/s, %.1f MB/s, "
            "ETA %s\n",
            (unsigned long long)done, (unsigned long long)p->total, p->what,
            pct, rate, mbs, eta);
  }
  fflush(stderr);
}

void sl_progress_end(sl_progress *p) {
  if (p->drawn)
    fputc('\n', stderr);
  p->drawn = false;
}
