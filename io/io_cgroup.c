#include "io/io_cgroup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strlist.h"

/* v1 writes "no limit" as the largest page-aligned signed 64-bit value. */
#define V1_UNLIMITED ((uint64_t)1 << 60)
#define PATH_CAP 1024

/* Where one hierarchy is mounted, and the group its mount point shows. */
typedef struct mount_of {
  char point[PATH_CAP];
  char root[PATH_CAP];
} mount_of;

/* Parses an unsigned decimal number that ends the string or is followed by
 * white space; false for "max", an empty string or an overflow. */
static bool parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9')
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || (*end != '\0' && *end != '\n' && *end != ' '))
    return false;
  *out = v;
  return true;
}

/* The first line of a small file as a number. */
static bool read_u64(const char *path, uint64_t *out) {
  FILE *f = fopen(path, "re");
  if (!f)
    return false;
  char line[64];
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  return ok && parse_u64(line, out);
}

/* The value of a "key N" line of a file such as memory.stat. */
static bool read_stat_u64(const char *path, const char *key, uint64_t *out) {
  FILE *f = fopen(path, "re");
  if (!f)
    return false;
  size_t klen = strlen(key);
  char line[256];
  bool ok = false;
  while (!ok && fgets(line, sizeof line, f))
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
      ok = parse_u64(line + klen + 1, out);
  fclose(f);
  return ok;
}

static void skip_rest_of_line(FILE *f) {
  int c;
  while ((c = getc(f)) != EOF && c != '\n') {
  }
}

/* Lowers *limit to v when v is a limit (nonzero and below "unlimited"). */
static void take(uint64_t *limit, uint64_t v) {
  if (v > 0 && v < V1_UNLIMITED && (*limit == 0 || v < *limit))
    *limit = v;
}

/* Copies a mountinfo field, turning its octal escapes (\040 for a space)
 * back into bytes. False when it does not fit. */
static bool unescape(char *dst, size_t cap, const char *src) {
  size_t o = 0;
  for (const char *s = src; *s; o++) {
    if (o + 1 >= cap)
      return false;
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
        s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
      dst[o] = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 4;
    } else {
      dst[o] = *s++;
    }
  }
  dst[o] = '\0';
  return true;
}

/* Finds the v1 memory mount and the v2 mount in a mountinfo file:
 * "id parent dev root point options [optional...] - fstype source super". */
static void find_mounts(const char *mountinfo, mount_of *v1, bool *have_v1,
                        mount_of *v2, bool *have_v2) {
  *have_v1 = *have_v2 = false;
  FILE *f = fopen(mountinfo, "re");
  if (!f)
    return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    if (!strchr(line, '\n') && !feof(f)) {
      skip_rest_of_line(f);
      continue;
    }
    line[strcspn(line, "\n")] = '\0';
    char *field[32], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " ", &save); t && n < 32;
         t = strtok_r(NULL, " ", &save))
      field[n++] = t;
    int dash = 6;
    while (dash < n && strcmp(field[dash], "-") != 0)
      dash++;
    if (dash + 1 >= n)
      continue;
    const char *fstype = field[dash + 1];
    const char *super = dash + 3 < n ? field[dash + 3] : "";
    bool *have = NULL;
    mount_of *m = NULL;
    if (!*have_v1 && strcmp(fstype, "cgroup") == 0 &&
        sl_list_has(super, "memory")) {
      m = v1;
      have = have_v1;
    } else if (!*have_v2 && strcmp(fstype, "cgroup2") == 0) {
      m = v2;
      have = have_v2;
    }
    if (m && unescape(m->root, sizeof m->root, field[3]) &&
        unescape(m->point, sizeof m->point, field[4]))
      *have = true;
  }
  fclose(f);
}

/* Whether a path has a ".." component (a process outside its cgroup
 * namespace sees its group as "/../x"). */
static bool climbs(const char *path) {
  for (const char *c = path; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 2 && c[0] == '.' && c[1] == '.')
      return true;
    c += n + (c[n] == '/');
  }
  return false;
}

/* The directory of group cg in mount m; the mount point when cg is not
 * under the mount's root. False when the path does not fit. */
static bool group_dir(char *dir, size_t cap, const mount_of *m,
                      const char *cg) {
  const char *rel = "";
  size_t rlen = strlen(m->root);
  if (climbs(cg))
    rel = "";
  else if (strcmp(m->root, "/") == 0)
    rel = strcmp(cg, "/") == 0 ? "" : cg;
  else if (strncmp(cg, m->root, rlen) == 0 &&
           (cg[rlen] == '\0' || cg[rlen] == '/'))
    rel = cg + rlen;
  int n = snprintf(dir, cap, "%s%s", m->point, rel);
  return n >= 0 && (size_t)n < cap;
}

static uint64_t v1_limit(const mount_of *m, const char *cg) {
  char dir[PATH_CAP], path[PATH_CAP + 32];
  uint64_t limit = 0, v;
  if (!group_dir(dir, sizeof dir, m, cg))
    return 0;
  snprintf(path, sizeof path, "%s/memory.limit_in_bytes", dir);
  if (read_u64(path, &v))
    take(&limit, v);
  snprintf(path, sizeof path, "%s/memory.stat", dir);
  if (read_stat_u64(path, "hierarchical_memory_limit", &v))
    take(&limit, v);
  return limit;
}

static uint64_t v2_limit(const mount_of *m, const char *cg) {
  char dir[PATH_CAP], path[PATH_CAP + 32];
  uint64_t limit = 0, v;
  if (!group_dir(dir, sizeof dir, m, cg))
    return 0;
  /* Up to and including the mount point (the real root has no memory.max;
   * a container's mounted group does). */
  size_t point_len = strlen(m->point);
  for (;;) {
    snprintf(path, sizeof path, "%s/memory.max", dir);
    if (read_u64(path, &v))
      take(&limit, v);
    char *slash = strrchr(dir, '/');
    if (strlen(dir) <= point_len || !slash || (size_t)(slash - dir) < point_len)
      break;
    *slash = '\0';
  }
  return limit;
}

uint64_t sl_io_cgroup_limit_at(const char *proc_cgroup, const char *mountinfo) {
  FILE *f = fopen(proc_cgroup, "re");
  if (!f)
    return 0;
  /* Lines are "id:controllers:path"; v2's is "0::path". */
  char line[1024], v1[PATH_CAP] = "", v2[PATH_CAP] = "";
  while (fgets(line, sizeof line, f)) {
    if (!strchr(line, '\n') && !feof(f)) {
      skip_rest_of_line(f); /* a path too long for us is not guessed at */
      continue;
    }
    line[strcspn(line, "\n")] = '\0';
    char *a = strchr(line, ':');
    char *b = a ? strchr(a + 1, ':') : NULL;
    if (!b || b[1] != '/')
      continue;
    *b = '\0';
    const char *ctrl = a + 1, *cg = b + 1;
    if (sl_list_has(ctrl, "memory"))
      snprintf(v1, sizeof v1, "%s", cg);
    else if (a == line + 1 && line[0] == '0' && *ctrl == '\0')
      snprintf(v2, sizeof v2, "%s", cg);
  }
  fclose(f);
  if (!v1[0] && !v2[0])
    return 0;
  mount_of m1, m2;
  bool have1, have2;
  find_mounts(mountinfo, &m1, &have1, &m2, &have2);
  uint64_t limit = 0;
  if (v1[0] && have1)
    take(&limit, v1_limit(&m1, v1));
  if (v2[0] && have2)
    take(&limit, v2_limit(&m2, v2));
  return limit;
}

uint64_t sl_io_cgroup_limit(void) {
  return sl_io_cgroup_limit_at("/proc/self/cgroup", "/proc/self/mountinfo");
}
