/* The format-specific halves of sl_fwriter (formats/core/writer.c dispatches).
 */
#ifndef SLUICE_FORMATS_WRITER_IMPL_H
#define SLUICE_FORMATS_WRITER_IMPL_H

#include "formats/core/writer.h"

/* The boxes a writer kept (formats/core/writer.c): count[i] for each sample
 * (count may be shorter than the samples added before the first box: it
 * covers them, zeroed), and total boxes encoded back to back in bytes. */
typedef struct sl_fw_boxes {
  const uint16_t *count;
  const uint8_t *bytes;
  uint64_t total;
} sl_fw_boxes;

typedef struct sl_lmdb_writer sl_lmdb_writer;
typedef struct sl_hdf5_writer sl_hdf5_writer;

/* open_path: the file to create; name: how messages call it. */
sl_status sl_lmdb_writer_open(sl_lmdb_writer **out, const char *open_path,
                              const char *name, sl_err *err);
/* One sample: meta->name_len bytes of name, then the payload; targets
 * holds the writer's target width (k) floats. */
sl_status sl_lmdb_writer_add(sl_lmdb_writer *w, uint64_t index,
                             const void *payload, size_t len,
                             const sl_sample_info *meta, const char *name,
                             const float *targets, uint32_t k, sl_err *err);
/* Writes the box chunks (bx NULL: none, the layout stays), the index
 * chunks and the metadata (levels: the "levels" line's text, "" for none),
 * syncs and closes; frees w in every case. */
sl_status sl_lmdb_writer_finish(sl_lmdb_writer *w, uint64_t count,
                                uint32_t nclasses, const char *const *classes,
                                uint32_t k, const char *settings,
                                const char *levels, const sl_fw_boxes *bx,
                                sl_err *err);
/* The layout version records and metadata carry (default
 * SL_LMDB_LAYOUT_VERSION); before the first add. */
void sl_lmdb_writer_set_version(sl_lmdb_writer *w, uint32_t v);
void sl_lmdb_writer_free(sl_lmdb_writer *w);

/* tmp: the named file created at commit (payloads are spooled until then
 * to an anonymous file). */
sl_status sl_hdf5_writer_open(sl_hdf5_writer **out, const char *tmp,
                              sl_err *err);
sl_status sl_hdf5_writer_add(sl_hdf5_writer *w, const void *payload, size_t len,
                             const sl_sample_info *meta, const char *name,
                             const float *targets, uint32_t k, sl_err *err);
sl_status sl_hdf5_writer_finish(sl_hdf5_writer *w, uint32_t nclasses,
                                const char *const *classes, uint32_t k,
                                const char *settings, const char *levels,
                                const sl_fw_boxes *bx, sl_err *err);
void sl_hdf5_writer_set_version(sl_hdf5_writer *w, uint32_t v);
void sl_hdf5_writer_free(sl_hdf5_writer *w);

#endif
