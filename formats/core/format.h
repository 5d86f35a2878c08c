/* The formats sluice reads, as a table: one const row per format, defined
 * in that format's reader, listed once in format_table.c. The dispatch
 * (source.c) walks the rows to recognise a dataset, refuse the options its
 * format does not take and index it, and builds its messages from the
 * rows' names: adding a format is a reader file and one row.
 *
 * Only formats/ includes this header. */
#ifndef SLUICE_FORMATS_FORMAT_H
#define SLUICE_FORMATS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/core/source.h"

/* The dataset.* options a format may take, a bit each (sl_format.options):
 * one set that the format's row lacks is refused at open, naming the key
 * and the formats that take it. */
enum {
  SL_FOPT_LABEL_FILE = 1u << 0,  /* dataset.label_file */
  SL_FOPT_LMDB_DB = 1u << 1,     /* dataset.lmdb_db */
  SL_FOPT_ARRAYS = 1u << 2,      /* dataset.images, labels, targets,
                                    labels_path, lengths, label_from */
  SL_FOPT_LABEL_KEY = 1u << 3,   /* dataset.label_key */
  SL_FOPT_TARGETS_EXT = 1u << 4, /* dataset.targets_ext */
};

/* The bit of entry layout k (sl_entry_kind) in sl_format.entries. */
#define SL_ENTRIES_BIT(k) (1u << (unsigned)(k))

/* A reader of many files claims a path by its form: *mine true when path
 * is this format's (for a reader of several kinds, *kind says which; on
 * entry *kind is dataset.format, SL_FORMAT_AUTO or one the reader serves).
 * Errors only where path can be nothing but this format's. */
typedef sl_status (*sl_format_claim_fn)(const char *path, sl_format_kind *kind,
                                        bool *mine, sl_err *err);

typedef struct sl_format {
  sl_format_kind kind; /* dataset.format's value for it */
  const char *name;    /* "lmdb": sl_source_format_name */
  const char *title;   /* "LMDB": in lists of formats in messages */
  const char *what;    /* "an LMDB file": "...; this is <what>" */
  unsigned options;    /* SL_FOPT_* it takes */
  unsigned entries;    /* SL_ENTRIES_BIT of each dataset.entries it reads */
  /* The entries' kind whatever dataset.entries says ("example"); NULL: the
   * entry layout's name. */
  const char *entries_name;

  /* Sources of many files (shards, a folder): NULL claim for a format of
   * one file only; NULL index_file for a format of many files only. */
  sl_format_claim_fn claim;
  sl_status (*index_many)(sl_source *src, const char *path, sl_err *err);

  /* One file. sniff: 2 when head[0, n) (n <= 24, the file's first bytes)
   * carries this format's magic, 1 when it only passes a check that
   * chance passes too (a checksum), 0 when it is not this format. */
  int (*sniff)(const uint8_t *head, size_t n);
  /* A second look where no row's sniff took the head (HDF5's userblock);
   * NULL: none. */
  bool (*sniff_deep)(int fd, uint64_t size);
  /* Why a file named as this format is not one (n: the head's bytes). */
  const char *(*not_this)(size_t n);
  /* A file this format's writers make but sluice does not read in place
   * (a gzip-compressed TFRecord): SL_OK, or its error naming file. NULL:
   * none. */
  sl_status (*refuse)(const uint8_t *head, size_t n, const char *file,
                      sl_err *err);
  /* The file a directory of this format holds ("data.mdb"), and what such
   * a directory is ("an LMDB environment"); NULL: not a directory. */
  const char *dir_file, *dir_what;
  /* What sluice reads of this format, for the message on a file of no
   * format ("LMDB files (its own, ...)"). */
  const char *reads;
  /* Indexes the mapped file (src->map, src->fd, src->file_size). */
  sl_status (*index_file)(sl_source *src, const char *path, sl_err *err);
} sl_format;

/* The table (format_table.c), in the order rows claim paths and win
 * sniffing ties, and in which messages list them. */
extern const sl_format *const sl_format_table[];
extern const size_t sl_format_table_len;

/* The rows, each defined in its reader. */
extern const sl_format sl_format_lmdb, sl_format_hdf5, sl_format_tfrecord,
    sl_format_recordio, sl_format_webdataset, sl_format_folder,
    sl_format_shards;

#endif
