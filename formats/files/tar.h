/* Tar archives as WebDataset writes them (Python's tarfile, GNU tar):
 * walking the members of a shard held in memory, at open only.
 *
 * Reads the 512-byte ustar header (checksum checked, octal or GNU base-256
 * sizes), GNU long names ('L': the next member's name) and pax extended
 * headers ('x': path= and size= for the next member; 'g' global headers are
 * skipped). Every other type is handed back for the caller to skip.
 *
 * Bounds: time linear in the shard's size; no allocation (a name is at most
 * SL_TAR_NAME_MAX - 1 bytes, a pax header at most SL_TAR_PAX_MAX bytes,
 * else the shard is damaged). Thread-safe (no state outside *pos, *m). */
#ifndef SLUICE_FORMATS_TAR_H
#define SLUICE_FORMATS_TAR_H

#include <stddef.h>
#include <stdint.h>

#define SL_TAR_BLOCK 512u
#define SL_TAR_NAME_MAX 4096u
#define SL_TAR_PAX_MAX (1u << 20)

typedef struct sl_tar_member {
  char name[SL_TAR_NAME_MAX]; /* the full path, NUL-terminated */
  char type;                  /* typeflag: '0' (or '\\0', '7') a regular file */
  uint64_t header; /* offset of its first header (long name, pax, ustar) */
  uint64_t data;   /* offset of its data */
  uint64_t size;   /* its data's bytes (data + size <= the shard's size) */
} sl_tar_member;

/* The member at *pos (a block boundary) of the shard p[0..n). Returns 1
 * with *m filled and *pos past its padded data; 0 at the end of the archive
 * (a zero block, or *pos == n); -1 when the shard is damaged, with a reason
 * naming the offset in why (why_cap bytes): a bad checksum, a header or a
 * member's data cut short by the end of the shard, a size that is not a
 * number, an extension header without a member after it, a long name over
 * SL_TAR_NAME_MAX, a malformed pax record. */
int sl_tar_next(const uint8_t *p, uint64_t n, uint64_t *pos, sl_tar_member *m,
                char *why, size_t why_cap);

/* Whether the member is a regular file (its data is a file's bytes). */
static inline int sl_tar_is_file(const sl_tar_member *m) {
  return m->type == '0' || m->type == '\0' || m->type == '7';
}

#endif
