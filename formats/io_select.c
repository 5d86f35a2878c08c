#include "formats/io_select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sl_io_kind_name(sl_io_kind kind) {
  switch (kind) {
  case SL_IO_MMAP:
    return "mmap";
  case SL_IO_PREAD:
    return "pread";
  case SL_IO_URING:
    return "uring";
  case SL_IO_AUTO:
    return "auto";
  }
  return "?";
}

sl_status sl_io_mem_available(const char *path, uint64_t *bytes, sl_err *err) {
  *bytes = 0;
  if (!path)
    path = "/proc/meminfo";
  FILE *f = fopen(path, "re");
  if (!f)
    return sl_err_errno(err, SL_EIO, errno, "%s: open", path);
  char line[256];
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    uint64_t kib;
    char unit[8] = "";
    if (sscanf(line, "MemAvailable: %" SCNu64 " %7s", &kib, unit) >= 1) {
      if (strcmp(unit, "kB") != 0 || kib > UINT64_MAX / 1024)
        break; /* an unknown unit or an absurd value: not trusted */
      *bytes = kib * 1024;
      found = true;
      break;
    }
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad)
    return sl_err_set(err, SL_EIO, "%s: read error", path);
  if (!found)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: no 'MemAvailable: <n> kB' line (kernel < 3.14?): "
                      "set loader.io explicitly",
                      path);
  return SL_OK;
}

const char *sl_io_fmt_bytes(uint64_t bytes, char *buf, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, cap, "%" PRIu64 " B", bytes);
  else
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
  return buf;
}

sl_io_kind sl_io_pick(sl_io_kind requested, uint64_t dataset_bytes,
                      uint64_t mem_available, double share, char *why,
                      size_t why_cap) {
  if (requested != SL_IO_AUTO) {
    if (why_cap)
      snprintf(why, why_cap, "loader.io = %s", sl_io_kind_name(requested));
    return requested;
  }
  double limit = share * (double)mem_available;
  sl_io_kind k = (double)dataset_bytes > limit ? SL_IO_URING : SL_IO_MMAP;
  if (why_cap) {
    char a[32], b[32];
    snprintf(why, why_cap, "auto: dataset %s %s %.2f x available memory %s: %s",
             sl_io_fmt_bytes(dataset_bytes, a, sizeof a),
             k == SL_IO_URING ? ">" : "<=", share,
             sl_io_fmt_bytes(mem_available, b, sizeof b), sl_io_kind_name(k));
  }
  return k;
}

/* First line of a small file as an unsigned number; false if unreadable or
 * not a number ("max" in cgroup v2 means no limit). */
static bool read_u64(const char *path, uint64_t *out) {
  FILE *f = fopen(path, "re");
  if (!f)
    return false;
  char line[64];
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  if (!ok)
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(line, &end, 10);
  if (errno != 0 || end == line)
    return false;
  *out = v;
  return true;
}

uint64_t sl_io_cgroup_limit(void) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return 0;
  char line[1024], v1[768] = "", v2[768] = "";
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *a = strchr(line, ':');
    char *b = a ? strchr(a + 1, ':') : NULL;
    if (!b)
      continue;
    *b = '\0';
    const char *ctrl = a + 1, *cg = b + 1;
    bool memory = false;
    for (const char *c = ctrl; *c;) { /* "memory" or "cpu,memory" */
      size_t n = strcspn(c, ",");
      if (n == 6 && strncmp(c, "memory", 6) == 0)
        memory = true;
      c += n + (c[n] == ',');
    }
    if (memory)
      snprintf(v1, sizeof v1, "%s", cg);
    else if (line[0] == '0' && a == line + 1 && *ctrl == '\0')
      snprintf(v2, sizeof v2, "%s", cg);
  }
  fclose(f);
  char path[1024];
  uint64_t limit = 0;
  if (v1[0]) {
    snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
             strcmp(v1, "/") == 0 ? "" : v1);
    if (read_u64(path, &limit))
      return limit >= (uint64_t)1 << 60 ? 0 : limit; /* "unlimited" */
  }
  if (v2[0]) {
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max",
             strcmp(v2, "/") == 0 ? "" : v2);
    if (read_u64(path, &limit))
      return limit;
  }
  return 0;
}

sl_status sl_io_mem_budget(uint64_t *bytes, sl_err *err) {
  sl_status st = sl_io_mem_available(NULL, bytes, err);
  if (st != SL_OK)
    return st;
  uint64_t limit = sl_io_cgroup_limit();
  if (limit && limit < *bytes)
    *bytes = limit;
  return SL_OK;
}
