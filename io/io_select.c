#include "io/io_select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_cgroup.h"

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
             sl_format_bytes(dataset_bytes, a, sizeof a),
             k == SL_IO_URING ? ">" : "<=", share,
             sl_format_bytes(mem_available, b, sizeof b), sl_io_kind_name(k));
  }
  return k;
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
