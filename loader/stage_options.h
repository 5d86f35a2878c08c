/* The file part of the reader's options, from an open source (io_source.c).
 * The configured part, and the other stages' typed options, come from the
 * settings (loader/settings.h): only the loader reads the config, and io/,
 * formats/ and augment/ take these structs and never see an sl_config.
 *
 * Thread safety: fills the caller's struct and touches nothing else; any
 * thread may call it. No memory is allocated. */
#ifndef SLUICE_LOADER_STAGE_OPTIONS_H
#define SLUICE_LOADER_STAGE_OPTIONS_H

#include "formats/core/source.h"
#include "io/io_reader.h"

/* Fills the file part of o (fd, name, file_size, count, max_length,
 * locate) from an open source; name is the path for messages. src must
 * outlive the reader opened with o. */
void sl_io_opts_from_source(sl_io_opts *o, const sl_source *src,
                            const char *name);

#endif
