/* The memory limit of this process's memory cgroup.
 *
 * A container's /proc/meminfo shows the host's memory, not its own, so
 * `loader.io = auto` (io_select.h) also reads the cgroup's limit. The group
 * is found as runc and the JVM find it: /proc/self/cgroup names the group
 * of each hierarchy, /proc/self/mountinfo says where that hierarchy is
 * mounted and which of its groups the mount shows as its root. Both
 * hierarchies are read and the lowest limit found wins:
 *   - cgroup v1 (the mount whose super options list "memory"): the group's
 *     memory.limit_in_bytes and its memory.stat hierarchical_memory_limit,
 *     which includes the ancestors' limits. 2^60 and above mean unlimited.
 *   - cgroup v2 (the "cgroup2" mount, the "0::" line): memory.max of the
 *     group and of each ancestor up to the mount ("max": no limit), since a
 *     group's memory.max does not include its ancestors'.
 * A group outside its mount's root (a container that mounts its own group
 * without a cgroup namespace, or a path with "..": a process outside its
 * cgroup namespace) is read at the mount point.
 *
 * Nothing is kept between calls (the files are opened, read and closed);
 * both functions may be called from any thread. */
#ifndef SLUICE_IO_IO_CGROUP_H
#define SLUICE_IO_IO_CGROUP_H

#include <stdint.h>

/* The limit in bytes for this process, or 0 when there is none or nothing
 * can be read. Never fails. */
uint64_t sl_io_cgroup_limit(void);

/* The same from other files, for tests: proc_cgroup and mountinfo are read
 * in place of /proc/self/cgroup and /proc/self/mountinfo. */
uint64_t sl_io_cgroup_limit_at(const char *proc_cgroup, const char *mountinfo);

#endif
