/* One image folder file's header read into its index entry (kind, size,
 * channels) and the entry checked: what the folder readers (a directory,
 * source_folder.c; a list of files, source_folder_list.c) both do per file.
 * Reads at most SL_FOLDER_HEAD_BYTES of a file, or HEAD_MAX (16 MiB) when
 * its header lies further. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pread_full.h"

#define HEAD_BYTES SL_FOLDER_HEAD_BYTES
#define HEAD_MAX (16u << 20)

sl_status sl_folder_scan_file(sl_source *src, uint64_t i, uint8_t *buf,
                              const char *line, sl_err *err) {
  const char *rel = sl_source_file_path(src, (size_t)i);
  char where[PATH_MAX + 64];
  snprintf(where, sizeof where, "%s%sfile %s", line ? line : "",
           line ? ": " : "", rel);
  int fd = openat(src->dirfd, rel, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && src->dropping)
    return sl_source_bad_entry(src, i, where, strerror(errno), err);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s/%s", src->path, rel);
  const sl_file_span *f = &src->spans[i]; /* its size as listed */
  sl_status st = SL_OK;
  size_t want = f->size < HEAD_BYTES ? (size_t)f->size : HEAD_BYTES, got = 0;
  int rc = sl_pread_full(fd, buf, want, 0, &got);
  if (rc < 0) {
    st = src->dropping
             ? sl_source_bad_entry(src, i, where, strerror(errno), err)
             : sl_err_errno(err, SL_EIO, errno, "%s/%s: read", src->path, rel);
    goto out;
  }
  sl_sample_info *e = &src->index[i];
  char why[200];
  const char *bad = NULL;
  if (f->size > UINT32_MAX) {
    snprintf(why, sizeof why, "%" PRIu64 " bytes (at most 4 GiB)", f->size);
    bad = why;
  } else {
    bad = sl_source_take_image(buf, got, f->base, e, why, sizeof why);
    if (bad && got < f->size && got == HEAD_BYTES) { /* header further on */
      size_t more = f->size < HEAD_MAX ? (size_t)f->size : HEAD_MAX;
      uint8_t *big = malloc(more);
      if (!big) {
        st = sl_err_set(err, SL_ENOMEM, "%s/%s: %zu bytes", src->path, rel,
                        more);
        goto out;
      }
      if (sl_pread_full(fd, big, more, 0, &got) >= 0)
        bad = sl_source_take_image(big, got, f->base, e, why, sizeof why);
      free(big);
    }
  }
  e->length = (uint32_t)f->size;
  e->offset = f->base;
  if (bad) {
    st = sl_source_bad_entry(src, i, where, bad, err);
  } else {
    st = sl_source_check_entry(src, i, where, err);
    size_t nl = strlen(rel); /* its name is its path (names_are_files) */
    if (st == SL_OK && src->index[i].codec != 0)
      src->index[i].name_len = (uint16_t)(nl < UINT16_MAX ? nl : UINT16_MAX);
  }
out:
  close(fd);
  return st;
}
