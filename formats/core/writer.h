/* Writing a dataset file (LMDB or HDF5, layouts in formats/core/layout.h).
 *
 * Atomic: nothing appears at the destination until sl_fwriter_commit, which
 * syncs the file and then gives it its name in one step. LMDB: the file is
 * made with O_TMPFILE in the destination's directory (liblmdb opens it
 * through /proc/self/fd), so a killed process (even SIGKILL) leaves nothing
 * behind; commit links it to the destination (or, when replacing, to
 * ".NAME.sluice-tmp.PID" and renames that over the destination). HDF5:
 * payloads go to an anonymous spool file; only commit writes the named
 * ".NAME.sluice-tmp.PID" (HDF5 cannot create a file through /proc). Where
 * O_TMPFILE or /proc is missing, LMDB writes the named file from the start.
 * A process killed while a named temporary file exists leaves it; the next
 * writer opened for the same destination deletes temporary files whose
 * process no longer runs. sl_fwriter_abort deletes everything at once.
 *
 * Samples are added in index order. Memory: the LMDB writer holds one
 * transaction's pages (<= 32 MiB of values) and 16 bytes a sample (the
 * index chunks written at commit) plus 4 bytes per target; the HDF5 writer
 * spools names and payloads to an anonymous file and keeps 31 bytes per
 * sample (offsets, label, shape, codec, name length) plus 4 per target
 * until commit; once a sample has boxes, both keep 2 bytes a sample and 24
 * a box until commit (HDF5 unpacks them into its arrays during commit:
 * as much again).
 *
 * Thread safety: a writer is used by one thread at a time. */
#ifndef SLUICE_FORMATS_WRITER_H
#define SLUICE_FORMATS_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/core/source.h"

typedef struct sl_fwriter sl_fwriter;

/* Starts writing path in format fmt (SL_FORMAT_AUTO: from the extension).
 * Nothing is created at path until commit. Errors: SL_EINVAL (unknown
 * format), SL_EIO (cannot create the temporary file), SL_ENOMEM. */
sl_status sl_fwriter_open(sl_fwriter **out, const char *path,
                          sl_format_kind fmt, sl_err *err);

/* Gives every sample k float targets (0..SL_TARGETS_MAX); only before the
 * first add (SL_ESTATE after). Default 0. */
sl_status sl_fwriter_set_target_width(sl_fwriter *w, uint32_t k, sl_err *err);

/* Lets samples be codec 7, JPEG levels (formats/core/layout.h): the file gets
 * the levels layout (LMDB 4, HDF5 3) and records how many images and bytes
 * each level holds. Only before the first add (SL_ESTATE after). A codec-7
 * payload is checked (its directory, level 0's size against meta's);
 * without this call it is SL_EINVAL. */
sl_status sl_fwriter_set_levels(sl_fwriter *w, sl_err *err);

/* Appends one sample: payload bytes plus meta's label, codec, height, width
 * and channels (offset, length and name_len are ignored), its name (NULL or
 * "": none; at most SL_NAME_MAX bytes) and its target_width targets (NULL
 * only when the width is 0; each finite). Errors: SL_EINVAL (length 0 or
 * >= 4 GiB, a long name, a missing or non-finite target), SL_EIO. */
sl_status sl_fwriter_add_named(sl_fwriter *w, const void *payload, size_t len,
                               const sl_sample_info *meta, const char *name,
                               const float *targets, sl_err *err);
/* As sl_fwriter_add_named, with nboxes (0..SL_BOXES_MAX) boxes (NULL
 * when 0): each finite, x0 <= x1, y0 <= y1, label >= 0, only known flags
 * (SL_EINVAL naming the sample and box otherwise; nothing added). Commit
 * refuses a box label not below its class count. A file where some sample
 * has a box gets the boxes layout (LMDB 5, HDF5 4). Memory: 2 bytes a
 * sample and 24 a box until commit, once the first box arrives. */
sl_status sl_fwriter_add_annotated(sl_fwriter *w, const void *payload,
                                   size_t len, const sl_sample_info *meta,
                                   const char *name, const float *targets,
                                   const sl_box *boxes, uint32_t nboxes,
                                   sl_err *err);
/* sl_fwriter_add_named without a name or targets: the fixtures of tests and
 * benches (the library's sl_writer always passes both). */
sl_status sl_fwriter_add(sl_fwriter *w, const void *payload, size_t len,
                         const sl_sample_info *meta, sl_err *err);

/* Writes the metadata (classes, the writer's settings string), syncs the
 * temporary file and renames it onto the destination. replace = false fails
 * with SL_EIO ("exists") if the destination exists. Class names are at most
 * SL_CLASS_NAME_MAX bytes, and neither they nor settings may hold a line
 * break (SL_EINVAL, naming the class). Frees w in every case; on failure
 * the temporary file is removed. */
sl_status sl_fwriter_commit(sl_fwriter *w, uint32_t nclasses,
                            const char *const *classes, const char *settings,
                            bool replace, sl_err *err);

/* Discards everything written and frees w. Accepts NULL. */
void sl_fwriter_abort(sl_fwriter *w);

/* Samples added so far. */
uint64_t sl_fwriter_count(const sl_fwriter *w);

#endif
