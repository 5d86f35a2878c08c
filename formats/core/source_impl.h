/* Inside a source: the struct the format modules fill in at open.
 * Only formats/ includes this header. */
#ifndef SLUICE_FORMATS_SOURCE_IMPL_H
#define SLUICE_FORMATS_SOURCE_IMPL_H

#include <stdbool.h>

#include "formats/core/image_sniff.h"
#include "formats/core/source.h"
#include "formats/hdf5/h5filter.h"
#include "formats/hdf5/h5tiles.h"

/* An HDF5 array of filtered chunks of whole samples, or of samples that
 * span chunks (tiled: formats/hdf5/h5tiles.h): index entry i holds its chunk's
 * stored bytes, or its group's span of chunks; the workers undo the filters
 * and copy the chunks into place (sl_source_unfilter). Memory: 4 bytes per
 * chunk (tiled: 12 per chunk and 4 per group). */
#define SL_H5_FILL 0x80000000u /* mask of a chunk never written */
_Static_assert(SL_H5_FILL == SL_H5T_FILL, "one marker for unwritten chunks");
typedef struct sl_h5_filtered {
  sl_h5_pipeline pipe;   /* tiled: chunk_bytes is one chunk's */
  uint64_t per_chunk;    /* samples a chunk (a group) holds */
  uint64_t sample_bytes; /* H·W·C */
  uint64_t group_bytes;  /* per_chunk × sample_bytes: a chunk (group) undone */
  bool tiled;            /* samples span chunks */
  sl_h5_tiling tiling;   /* tiled: the shapes */
  sl_h5_tile *tile;      /* tiled: groups × tiling.tiles chunks */
  uint32_t *mask;        /* per chunk (tiled: per group, 0 or SL_H5_FILL):
                            its filter mask, or SL_H5_FILL */
  uint8_t fill;          /* the fill value of unwritten chunks */
  char dset[256];        /* the dataset's name, for messages */
} sl_h5_filtered;

/* A multi-part RecordIO record (formats/records/recordio.h): its index entry
 * spans the parts from the first one's header, and the workers join them
 * (sl_source_unfilter). 16 bytes per such record, sorted by sample. */
typedef struct sl_recio_join {
  uint64_t sample;
  uint32_t skip;  /* IRHeader bytes before the image, once joined */
  uint32_t bytes; /* the image's bytes */
} sl_recio_join;

struct sl_source {
  char *path;                     /* as given to open */
  const struct sl_format *format; /* its row (formats/core/format.h) */
  bool dir_path;      /* path is a directory holding the format's dir_file */
  int fd;             /* the data file, O_RDONLY */
  uint64_t file_size; /* at open */
  uint8_t *map;       /* whole file, PROT_READ; NULL once unmapped */
  bool keep_map;      /* SL_SOURCE_MMAP: reads come from map */
  sl_format_kind fmt;
  uint32_t version; /* layout version */
  uint64_t count;
  sl_sample_info *index; /* count entries, 24 B each */
  uint32_t target_width; /* K */
  float *targets;        /* count × K, NULL when K = 0 */
  uint32_t max_length;
  uint32_t nclasses;
  char *class_blob;       /* nclasses NUL-terminated names back to back */
  uint32_t *class_off;    /* nclasses offsets into class_blob */
  char *writer;           /* the writer's settings ("" when absent) */
  sl_entry_kind entries;  /* after open: never AUTO */
  sl_channel_order order; /* of raw Caffe Datums */
  char *label_file;       /* NULL: none */
  char *lmdb_db;          /* named sub-database; NULL: the main one */
  char *images, *labels, *targets_name; /* HDF5 arrays: NULL = detect */
  char *lengths_name; /* HDF5 fixed-size encoded images: NULL = detect */
  char *labels_path;  /* HDF5 arrays: labels' file (NULL: this one) */
  bool label_argmax;  /* HDF5 arrays: (N,K) rows labelled by argmax */
  sl_axis_order axis_order;
  uint64_t max_fill;   /* HDF5 chunked arrays: samples (chunks) never written */
  uint64_t heap_steps; /* HDF5 vlen arrays: heap objects stepped at open */
  char *desc;          /* HDF5 arrays: what was read (NULL: none) */
  sl_h5_filtered *h5f; /* HDF5 arrays of filtered chunks (NULL: none) */
  uint64_t skipped;    /* foreign: non-sample entries */
  uint64_t annotated;  /* foreign: AnnotatedDatums unwrapped */
  uint64_t *name_off;  /* foreign: file offset of sample i's name (its key);
                        NULL: names precede payloads */
  bool skip_bad_files; /* sl_source_opts.skip_bad_files */
  bool dropping;       /* a folder's scan: bad files are left out */
  uint64_t left_out;   /* files left out at open */
  char left_out_names[512]; /* the first of them, with why */
  char key_order[256];      /* foreign LMDB: the samples' order in words ("" for
                               formats whose order is the file's) */
  sl_box *boxes;            /* box_total boxes, sample by sample; NULL: none */
  uint64_t *box_off;        /* count + 1: sample i's are boxes[box_off[i] ..
                               box_off[i + 1]); NULL when the file has no boxes */
  uint64_t box_total;
  uint32_t max_boxes;
  bool levels_layout; /* LMDB 4 / HDF5 3: codec 7 samples allowed */
  uint32_t nlevels;   /* levels the writer recorded (0: none) */
  uint64_t level_images[SL_LEVELS_MAX], level_bytes[SL_LEVELS_MAX];
  char *image_key, *label_key; /* TFRecord, WebDataset (label_key): NULL
                                  for the format's default */
  int32_t label_offset;        /* TFRecord, RecordIO: added to labels */
  bool length_crc_only;        /* TFRecord: data CRCs not checked at open */
  sl_recio_join *joins;        /* RecordIO multi-part records (NULL: none) */
  uint64_t njoins;
  uint64_t join_scratch;   /* the largest multi-part record's joined bytes */
  sl_source_bad_fn on_bad; /* verify mode: report bad samples, keep going */
  void *on_bad_user;
  /* Many files (source_files.c); nfiles 0: the one file fd. */
  size_t nfiles, files_cap;
  sl_file_span *spans;  /* nfiles, bases rising, page-aligned */
  uint64_t *file_first; /* nfiles: each file's first sample */
  uint64_t *file_name;  /* nfiles: offset of its path in names */
  char *names;          /* paths, NUL-terminated, back to back */
  size_t names_len, names_cap;
  int dirfd;            /* lazy files' paths are relative to it (-1: none) */
  bool names_are_files; /* sample i's name is file i's path (a folder) */
  sl_file_set files;    /* over spans, once sl_source_files_done */
  size_t check_hint;    /* sl_source_check_entry's last file (open only) */
  char *targets_ext;    /* WebDataset: NULL = none (label_key: above) */
  /* A dataset at a URL: its files are objects fetched into the cache as
   * they are first read (source_files.c's open), checked against their
   * crc32c (file_crc, nfiles of them). remote_opts: as given to open, its
   * strings valid during open only. */
  sl_remote_opts remote_opts;
  sl_remote *remote;
  uint32_t *file_crc;
  bool reindex;             /* sl_source_opts.reindex */
  uint64_t sidecar_bytes;   /* foreign shards at URLs: their sidecar's */
  uint32_t targets_refused; /* the first sample's target width when its
                               table was refused (verify), else 0 */
};

/* Foreign LMDBs (source_key_order.c): puts the src->count samples, indexed
 * in key order (sample i's key at base + key_off[i], key_len[i] bytes), in
 * the order of the `__keys__` list at base + list_off (list_len bytes),
 * permuting index, names and targets, and says which order it is in
 * src->key_order; a list that does not name each sample once leaves key
 * order (and says why). Errors: SL_ENOMEM. */
sl_status sl_source_follow_key_list(sl_source *src, const uint8_t *base,
                                    const uint64_t *key_off,
                                    const uint16_t *key_len, uint64_t list_off,
                                    size_t list_len, sl_err *err);
/* Image folders: removes the files sl_source_bad_entry left out while
 * src->dropping (their entries zeroed) from the files, index and targets.
 * SL_EFORMAT when none is left. */
sl_status sl_source_drop_left_out(sl_source *src, sl_err *err);
/* Allocates the index for n samples (zeroed), and the targets when
 * src->target_width is set. */
sl_status sl_source_alloc_index(sl_source *src, uint64_t n, sl_err *err);
/* The targets table at the first sample with targets: rows rows of k
 * floats, zeroed. Refused when rows x k x 4 bytes exceed held, the bytes of
 * the files the targets are read from (a sound file holds each sample's k
 * floats, 4k bytes of it): a small file cannot ask for gigabytes. Returns
 * 0 with target_width = k; else -1 (refused) or -2 (no memory) with a
 * reason in why (cap bytes), no table, target_width 0 (nothing writes
 * through a missing table later) and targets_refused = k. */
int sl_source_alloc_targets(sl_source *src, uint64_t rows, uint32_t k,
                            uint64_t held, char *why, size_t cap);
/* The bytes of the source's files: the one file's, or the shards' in all. */
uint64_t sl_source_bytes_held(const sl_source *src);
/* Allocates the boxes of a file holding total boxes (box_off zeroed,
 * count + 1 entries: call after sl_source_alloc_index). total must be
 * bounded by the file's size by the caller (24 bytes a box). */
sl_status sl_source_alloc_boxes(sl_source *src, uint64_t total, sl_err *err);
/* Copies k NUL-terminated names laid back to back in blob (blob_len bytes
 * in all) as the class table. */
sl_status sl_source_set_classes(sl_source *src, const char *blob,
                                size_t blob_len, uint32_t k, sl_err *err);
/* Parses the writer's "IMAGES:BYTES ..." level summary (LMDB's "levels"
 * line, HDF5's levels attribute). */
sl_status sl_source_set_levels(sl_source *src, const char *s, size_t len,
                               sl_err *err);
sl_status sl_source_set_writer(sl_source *src, const char *s, size_t len,
                               sl_err *err);
/* Records the file's layout version v, or fails with SL_EFORMAT (naming the
 * format, v and the version this build reads) when it is not `reads`. */
sl_status sl_source_set_version(sl_source *src, const char *format, uint64_t v,
                                uint32_t oldest, uint32_t newest, sl_err *err);
/* Checks entry i (already filled in) against the file and the class table.
 * where names the record ("key 0x..", "offsets[i]"). A bad entry fails the
 * open with SL_EFORMAT, or in verify mode is reported through on_bad and
 * marked unusable (codec 0, length 0). */
sl_status sl_source_check_entry(sl_source *src, uint64_t i, const char *where,
                                sl_err *err);
/* As sl_source_check_entry's failure path, for a reason found by the format
 * module itself (bad record header...). */
sl_status sl_source_bad_entry(sl_source *src, uint64_t i, const char *where,
                              const char *reason, sl_err *err);

/* An entry that is an image file of len bytes at file offset off, as
 * sniffed (s->kind JPEG, PNG or WebP; sides up to 65535, checked by the
 * caller): its place, codec, size and channels. Label, name and the rest
 * are the caller's. */
static inline void sl_source_entry_from_sniff(sl_sample_info *e, uint64_t off,
                                              uint32_t len, const sl_sniff *s) {
  e->offset = off;
  e->length = len;
  e->codec = s->kind == SL_SNIFF_JPEG  ? SL_IMAGE_JPEG
             : s->kind == SL_SNIFF_PNG ? SL_IMAGE_PNG
                                       : SL_IMAGE_WEBP;
  e->width = (uint16_t)s->width;
  e->height = (uint16_t)s->height;
  e->channels = s->channels;
}

/* Fills entry e for an image file at p[0, len), file offset off; NULL or
 * a reason (not an image, BMP, a malformed header, sides over 65535).
 * Label, name and the rest are the caller's. */
const char *sl_source_take_image(const uint8_t *p, size_t len, uint64_t off,
                                 sl_sample_info *e, char *why, size_t cap);

/* An HDF5 file without sluice's /samples group: an h5py-style pixel array
 * beside optional labels/targets (source_h5array.c). file is an open HDF5
 * file id (hid_t), called under the HDF5 lock with error printing off. */
sl_status sl_source_index_h5array(sl_source *src, int64_t file, sl_err *err);

/* A foreign layout's one cursor pass (source_foreign.c), on an open
 * read-only transaction: base is liblmdb's map address of file offset 0,
 * entries the tree's entry count. Fills layout, count, index, targets. */
typedef struct MDB_txn MDB_txn;
typedef struct MDB_cursor MDB_cursor;
sl_status sl_source_index_foreign(sl_source *src, MDB_cursor *cur,
                                  const uint8_t *base, uint64_t entries,
                                  sl_err *err);
/* Checks an LMDB file's structure (meta pages, every page of the main tree)
 * against the map, so that a truncated or corrupt file is an error and not
 * a fault inside liblmdb. subdb (NULL or "": the main tree) names the
 * sub-database whose tree holds the entries. *entries gets that tree's
 * entry count and *first_data the file offset of the first (smallest) key's
 * value, which ties liblmdb's map addresses to file offsets. held (may be
 * NULL) gets the check's scratch while it runs and NULL once it is freed:
 * a caller that runs the check under common/map_guard.h's guard frees
 * *held after a fault. */
sl_status sl_lmdb_check(const uint8_t *map, uint64_t size, const char *path,
                        const char *subdb, bool thorough, uint64_t *entries,
                        uint64_t *first_data, void **held, sl_err *err);

/* A single LMDB or HDF5 file at a URL (source_url_file.c): path is an
 * s3:// or http(s):// URL, and fmt LMDB or HDF5 or its name ends so
 * (.lmdb, .mdb, .h5, .hdf5, .hdf, .he5). */
bool sl_source_is_url_file(const char *path, sl_format_kind fmt);
/* The file at url fetched whole into the cache (remote/remote.h's
 * sl_remote_file): *r the remote it came through, *fd a descriptor of it
 * (the caller closes both), local a path that opens it
 * ("/proc/self/fd/N"). Errors: as sl_remote_open and sl_remote_file. */
sl_status sl_source_fetch_url_file(const char *url, const sl_remote_opts *opts,
                                   sl_remote **r, int *fd, char *local,
                                   size_t cap, sl_err *err);
/* err's message with local said as url (its shown form). */
void sl_source_say_url(sl_err *err, const char *local, const char *url);

/* Many-file sources (source_files.c). Adds a file of size bytes at the
 * next page-aligned base: fd open, or -1 to open it per read by path
 * (relative to src->dirfd when that is >= 0). Then files_done builds the
 * set (src->files) and sets file_size to its end; call it before the
 * entries are checked (an entry must lie inside one file). */
sl_status sl_source_add_file(sl_source *src, const char *path, int fd,
                             uint64_t size, sl_err *err);
void sl_source_files_done(sl_source *src);
/* File k's path (as added). */
const char *sl_source_file_path(const sl_source *src, size_t k);

/* Opens every shard of l (kept open: RLIMIT_NOFILE raised as
 * sl_file_set_reserve_fds says), adds it, and calls sl_source_files_done.
 * path (dataset.path) names the set in messages; a shard that cannot be
 * opened is SL_EIO naming it. */
typedef struct sl_shard_list sl_shard_list;
sl_status sl_source_add_shards(sl_source *src, const sl_shard_list *l,
                               const char *path, sl_err *err);

/* An image folder read through a list file (source_folder_list.c,
 * formats/files/image_list.h): path the list, its paths relative to its folder
 * (src->dirfd). */
sl_status sl_source_index_folder_list(sl_source *src, const char *path,
                                      sl_err *err);
/* Whether path is such a list by its name (.txt, .lst) and first image
 * line (PATH LABEL or im2rec's INDEX<TAB>LABEL<TAB>PATH, the path an
 * image's name). */
bool sl_folder_list_like(const char *path);
/* Folder file i's header read into entry i (kind, size, channels; buf
 * HEAD_BYTES of scratch), the entry checked; line (NULL: none) prefixes
 * where it was listed in messages. */
#define SL_FOLDER_HEAD_BYTES (64u << 10)
sl_status sl_folder_scan_file(sl_source *src, uint64_t i, uint8_t *buf,
                              const char *line, sl_err *err);

/* TFRecord and RecordIO (source_tfrecord.c, source_recordio.c) index one
 * file at a time, so that a source of many files (shards) can call them
 * once per file: the file's records are appended to src's index at
 * src->count (the index allocated for all of them beforehand), its
 * offsets plus base. path names the file in messages. */
typedef struct sl_rec_file {
  const char *path;
  const uint8_t *map; /* the whole file, read-only */
  uint64_t size;
  uint64_t base; /* added to the file's offsets in the index (0: one file) */
} sl_rec_file;

/* "record K at offset OFF" into buf (cap >= 64 bytes), prefixed with
 * "PATH: " when f is not the source's own file: the record files' `where`,
 * made for every record at open, so without snprintf (a sixth of a
 * TFRecord's open time with it). */
void sl_rec_where(const sl_source *src, const sl_rec_file *f, uint64_t k,
                  uint64_t off, char *buf, size_t cap);

/* TFRecord: the records of f, their framing and length CRCs checked (a
 * bad one is SL_EFORMAT naming file, record and offset; in verify mode it
 * ends the file, counted as one more, bad, record). */
sl_status sl_tfrecord_count(sl_source *src, const sl_rec_file *f,
                            uint64_t *records, sl_err *err);
/* Appends f's `records` records (as counted) to the index: each record's
 * data CRC checked (unless src->length_crc_only) and its Example parsed
 * (src->image_key, label_key). */
sl_status sl_tfrecord_append(sl_source *src, const sl_rec_file *f,
                             uint64_t records, sl_err *err);
sl_status sl_source_index_tfrecord(sl_source *src, sl_err *err);

/* RecordIO: the offsets of f's records, from idx_path (lines `key\toffset`
 * as MXIndexedRecordIO writes; NULL: none) or a scan of the framing;
 * *offsets is malloc'd (8 bytes a record, freed by the caller). */
sl_status sl_recordio_offsets(sl_source *src, const sl_rec_file *f,
                              const char *idx_path, uint64_t **offsets,
                              uint64_t *records, sl_err *err);
/* As sl_recordio_offsets, from an .idx's bytes idx[0, idx_len) already read
 * (idx_name names it in messages); idx NULL: the framing walked. */
sl_status sl_recordio_offsets_in(sl_source *src, const sl_rec_file *f,
                                 const char *idx_name, const uint8_t *idx,
                                 size_t idx_len, uint64_t **offsets,
                                 uint64_t *records, sl_err *err);
/* Appends the image records at those offsets (records without image bytes
 * are skipped and counted); multi-part ones are added to src->joins.
 * capacity: the index entries allocated, for the targets' allocation by
 * the first sample. */
sl_status sl_recordio_append(sl_source *src, const sl_rec_file *f,
                             const uint64_t *offsets, uint64_t records,
                             uint64_t capacity, sl_err *err);
sl_status sl_source_index_recordio(sl_source *src, sl_err *err);
/* PREFIX.idx beside PREFIX.rec (FILE.idx beside another name) into buf;
 * *found tells whether it is there (a regular file). */
sl_status sl_recordio_idx_beside(const char *path, char *buf, size_t cap,
                                 bool *found, sl_err *err);

/* Sample i's multi-part record, or NULL. */
const sl_recio_join *sl_recio_find_join(const sl_source *src, uint64_t i);
/* sl_source_unfilter for RecordIO: a multi-part record's parts joined into
 * scratch (src->join_scratch bytes) and its image; else in itself. */
sl_status sl_recio_unfilter(const sl_source *src, uint64_t i, const uint8_t *in,
                            size_t len, uint8_t *scratch, const uint8_t **out,
                            size_t *out_len, sl_err *err);

#define SL_REPACK_HINT "re-create the file with `sluice pack`"

#endif
