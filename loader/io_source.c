/* The file part of sl_io_opts from an open source. The glue between two
 * sibling stages lives above both: io/ knows no dataset format, formats/
 * knows no reader. */
#include "loader/stage_options.h"

static void source_locate(const void *ctx, uint64_t i, uint64_t *offset,
                          uint32_t *length) {
  const sl_sample_info *e = sl_source_info(ctx, i);
  *offset = e->offset;
  *length = e->length;
}

void sl_io_opts_from_source(sl_io_opts *o, const sl_source *src,
                            const char *name) {
  o->fd = sl_source_fd(src);
  o->name = name;
  o->file_size = sl_source_file_size(src);
  o->files = sl_source_files(src); /* many files: the table; NULL: one */
  o->count = sl_source_count(src);
  o->max_length = sl_source_max_length(src);
  o->locate = source_locate;
  o->locate_ctx = src;
}
