/* A dataset source: one open LMDB, HDF5, TFRecord or MXNet RecordIO file,
 * or many files read as one (WebDataset shards, an image folder, record
 * shards, a sharded dataset), indexed once at open.
 *
 * After sl_source_open returns, no LMDB transaction and no HDF5 call is
 * made: every sample's bytes sit at a known offset of the file, read either
 * from a read-only map (zero-copy) or with pread into the caller's buffer.
 *
 * Thread safety: a source is immutable after open and shared read-only by
 * all worker threads; every function but open/close may be called
 * concurrently. Close only once no other thread uses it.
 *
 * Memory: the index holds SL_SAMPLE_INFO_BYTES (24) bytes per sample, and
 * the targets 4 × target_width bytes per sample, allocated once at open,
 * plus the class names; a file with boxes adds 8 bytes per sample (the
 * offsets of its boxes) and 24 per box (bounded by the file's size: each
 * takes 24 bytes there); foreign LMDB layouts add 8 bytes per sample (the
 * file offset of each key, the sample's name). Sample names stay in the
 * file (read on demand).
 * The map is address space, not resident memory.
 *
 * A source of many files (WebDataset shards, an image folder) reads them as
 * one offset space (common/file_span.h): file k at a page-aligned base,
 * the index's offsets in that space, each sample inside one file. It adds
 * per file: its descriptor (shards; a folder's files are opened per read),
 * a 24-byte span, 8 bytes (its first sample) and 8 + its path's bytes (its
 * name). The shards stay open: RLIMIT_NOFILE's soft limit is raised to the
 * hard one when they need it, and the open fails naming the count when
 * even that is too few. */
#ifndef SLUICE_FORMATS_SOURCE_H
#define SLUICE_FORMATS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/file_span.h"
#include "formats/core/levels.h"
#include "remote/remote.h"
#include "sluice.h"

/* The file format (dataset.format). */
typedef enum sl_format_kind {
  SL_FORMAT_AUTO, /* detected from the file's contents */
  SL_FORMAT_LMDB,
  SL_FORMAT_HDF5,
  SL_FORMAT_WEBDATASET, /* tar shards (source_wds.c) */
  SL_FORMAT_FOLDER,     /* an ImageFolder directory (source_folder.c) */
  SL_FORMAT_TFRECORD,   /* tf.train.Example records (source_tfrecord.c) */
  SL_FORMAT_RECORDIO,   /* MXNet RecordIO image records (source_recordio.c) */
  SL_FORMAT_SHARDS      /* sluice shards and their index (source_shards.c) */
} sl_format_kind;

/* The entry kind: what a file's entries hold (the dataset.entries key;
 * "layout" itself means a batch's NCHW/NHWC, sl_layout). Auto:
 * sluice's own when the file holds its "sluice.meta" entry, else from the first
 * sample-like value: an image file's magic means images, anything else is
 * read as a Caffe Datum. An HDF5 file is sluice's when it has the group
 * /samples with a sluice_layout attribute, else an array file. */
typedef enum sl_entry_kind {
  SL_ENTRIES_AUTO,
  SL_ENTRIES_SLUICE,
  SL_ENTRIES_CAFFE,  /* values are Caffe Datums (or SSD AnnotatedDatums) */
  SL_ENTRIES_IMAGES, /* values are JPEG/PNG files, keys are arbitrary */
  SL_ENTRIES_ARRAY,  /* HDF5: an h5py-style uint8 pixel array (N,H,W[,C]) */
  SL_ENTRIES_PICKLE, /* LMDB values pickle.dumps((image bytes, label)) */
  SL_ENTRIES_MSGPACK /* LMDB values msgpack [image bytes, label] */
} sl_entry_kind;

/* Plane order of a Caffe raw (not encoded) Datum with 3 channels
 * (dataset.channel_order): BGR is what Caffe's OpenCV-based tools write;
 * CIFAR-10's converter writes RGB. */
typedef enum sl_channel_order {
  SL_CHANNELS_AUTO, /* BGR for Caffe Datums, RGB for HDF5 arrays */
  SL_CHANNELS_BGR,
  SL_CHANNELS_RGB
} sl_channel_order;

/* How an HDF5 pixel array's axes are ordered (the dataset.axis_order
 * key).
 * Auto: NHWC when the last dimension is 1, 3 or 4, else NCHW when the
 * second is. */
typedef enum sl_axis_order {
  SL_AXES_AUTO,
  SL_AXES_NHWC,
  SL_AXES_NCHW,
  SL_AXES_NWHC,
  SL_AXES_NCWH
} sl_axis_order;

/* The typed options of a source (the loader builds them from dataset.*). */
typedef struct sl_source_opts {
  sl_format_kind fmt;
  sl_entry_kind entries; /* dataset.entries */
  sl_channel_order order;
  /* Foreign layouts: NULL or "" for none, else a text file of lines
   * `key label [t1 ... tK]` giving each key's label and targets. */
  const char *label_file;
  /* LMDB: NULL or "" reads the main database, else the named
   * sub-database (dataset.lmdb_db). */
  const char *lmdb_db;
  /* HDF5 arrays: the datasets' paths (NULL or "": detected), and the
   * array's axis order. */
  const char *images, *labels, *targets;
  sl_axis_order axis_order;
  /* HDF5 arrays: NULL or "": labels and targets in the file itself, else
   * the HDF5 file holding them; label_argmax: (N,K) rows also give the
   * label by argmax. */
  const char *labels_path;
  bool label_argmax;
  /* HDF5 fixed-size encoded images ((N, L) uint8 or (N,) opaque rows of
   * JPEG/PNG bytes padded to L): the (N,) dataset of each row's real
   * length (NULL or "": detected). */
  const char *lengths;
  /* HDF5 chunked arrays: the most samples in chunks never written, and the
   * most such chunks (dataset.max_fill_samples); 0: the default,
   * SL_SOURCE_MAX_FILL. */
  uint64_t max_fill_samples;
  /* The label's key: WebDataset, the integer field of a sample's .json
   * member (NULL or "": "label"); TFRecord, the Example feature (NULL or
   * "": image/class/label, TFDS's label when absent). TFRecord: the image's
   * feature (NULL or "": image/encoded, TFDS's image when absent).
   * WebDataset: the extension of a member holding float32 targets ("npy",
   * or NULL/"" for none). */
  const char *image_key, *label_key;
  const char *targets_ext;
  /* TFRecord and RecordIO: added to every stored label (TensorFlow's
   * ImageNet converter stores 1..1000, 0 for background: -1 gives
   * 0..999); a result below -1 is a bad sample, -1 is unlabelled. */
  int32_t label_offset;
  /* TFRecord: check only the length CRCs at open, not the data's (which
   * reads the whole file); verify mode checks both regardless. */
  bool length_crc_only;
  /* A dataset at a URL (s3://, http(s)://): the cache and the server
   * (io.cache_dir, io.cache_bytes, io.s3_*, io.ca_bundle, io.fetch_*). */
  sl_remote_opts remote;
  /* Image folders (a directory or a list of files): a file found
   * unreadable at open (not an image, a header sluice cannot read, a read
   * that fails) is left out of the index, counted and named
   * (sl_source_left_out) instead of failing the open: loader.on_error =
   * skip. Verify mode reports every one regardless. */
  bool skip_bad_files;
  /* Foreign shards at URLs (WebDataset): build their sidecar index again
   * even when the cache holds one (`sluice index URL`). */
  bool reindex;
} sl_source_opts;

#define SL_SOURCE_MAX_FILL 65536

/* How sl_source_read gets bytes: from a read-only map of the file
 * (zero-copy, MADV_RANDOM) or by pread into the caller's buffer. */
typedef enum sl_source_mode { SL_SOURCE_MMAP, SL_SOURCE_PREAD } sl_source_mode;

/* One index entry: 24 bytes. offset is absolute in the file. */
typedef struct sl_sample_info {
  uint64_t offset; /* payload's first byte in the file */
  uint32_t length; /* payload bytes */
  int32_t label;   /* class index, or -1 when unlabelled */
  uint16_t height; /* stored image size, as the writer recorded it */
  uint16_t width;
  uint8_t codec;     /* sl_image_codec (sluice.h) */
  uint8_t channels;  /* 1 or 3 */
  uint16_t name_len; /* the sample's name: the name_len bytes before the
                        payload (0: none) */
} sl_sample_info;
#define SL_SAMPLE_INFO_BYTES 24

typedef struct sl_source sl_source;

/* Opens path, detecting the format when fmt is SL_FORMAT_AUTO, and indexes
 * it. mode chooses how sl_source_read gets bytes (the loader's I/O engines,
 * io/, build on sl_source_fd and the index instead). Errors: SL_EIO (cannot
 * open/read/map), SL_EFORMAT (bad magic, version, layout, truncated file,
 * out-of-range offsets: the message names the file, sample index or key and
 * says to re-create the file with `sluice pack`), SL_ENOMEM. */
sl_status sl_source_open(sl_source **out, const char *path, sl_format_kind fmt,
                         sl_source_mode mode, sl_err *err);
/* As sl_source_open, with every option (NULL: the defaults, auto). */
sl_status sl_source_open_opts(sl_source **out, const char *path,
                              const sl_source_opts *opts, sl_source_mode mode,
                              sl_err *err);
void sl_source_close(sl_source *src);

/* Verify mode: as sl_source_open_opts, but a bad sample (out-of-range offset or
 * length, bad record header, label or shape) is reported through on_bad with
 * its index and a reason naming the key or offset, and marked unusable in
 * the index (codec 0, length 0) instead of failing the open. Structural
 * damage (no usable tree, missing datasets, truncated file) still fails.
 * on_bad is called from the opening thread only. */
typedef void (*sl_source_bad_fn)(void *user, uint64_t index,
                                 const char *reason);
sl_status sl_source_open_verify_opts(sl_source **out, const char *path,
                                     const sl_source_opts *opts,
                                     sl_source_mode mode,
                                     sl_source_bad_fn on_bad, void *user,
                                     sl_err *err);

uint64_t sl_source_count(const sl_source *src);
/* Entry i < count. Never fails: the index was validated at open. */
const sl_sample_info *sl_source_info(const sl_source *src, uint64_t i);
/* The largest payload length of any sample: size pread buffers with it. */
uint32_t sl_source_max_length(const sl_source *src);
/* Scratch bytes sl_source_unfilter needs; 0 when every sample's stored
 * bytes are its codec's input (all but HDF5 arrays of filtered chunks, or
 * of samples that span chunks). */
uint64_t sl_source_unfilter_bytes(const sl_source *src);
/* Bytes of sample i's codec input, what sl_source_unfilter gives: its
 * pixels for HDF5 arrays of filtered chunks, the image once joined for a
 * multi-part RecordIO record, else its index entry's length. */
uint64_t sl_source_input_bytes(const sl_source *src, uint64_t i);
/* Sample i's codec input from its stored bytes in[0..len) (as read at its
 * index entry's offset and length): for a multi-part RecordIO record, its
 * parts joined into scratch and the image in it; for filtered HDF5 chunks, the
 * chunk's filters undone into scratch (sl_source_unfilter_bytes) and sample i's
 * H·W·C bytes in it; for samples that span chunks, its group's chunks
 * undone one by one and its bytes copied out into scratch; the fill value
 * for a chunk never written; else in itself. Adds 1 to *unfilters when
 * filters were undone or a group's chunks copied (not for a chunk stored
 * raw, every filter skipped). Errors:
 * SL_EFORMAT naming the file, sample and chunk (checksum
 * mismatch, corrupt compressed data). Thread-safe: the source is only
 * read. */
sl_status sl_source_unfilter(const sl_source *src, uint64_t i,
                             const uint8_t *in, size_t len, uint8_t *scratch,
                             const uint8_t **out, size_t *out_len,
                             uint64_t *unfilters, sl_err *err);
/* Samples a compressed chunk holds (HDF5 arrays of filtered chunks), 0
 * for every other source: the block an order should keep together. */
uint64_t sl_source_chunk_samples(const sl_source *src);
/* When sample i lies in a chunk whose filters must be undone: true, with
 * the chunk's number, the sample's offset in the unfiltered chunk and the
 * chunk's unfiltered size (for a cache of unfiltered chunks); false for
 * every other sample (fill value, stored raw, not an HDF5 array). */
bool sl_source_chunk_of(const sl_source *src, uint64_t i, uint64_t *chunk,
                        uint64_t *offset, uint64_t *chunk_bytes);
/* Sample i's whole chunk (or, for samples that span chunks, its group of
 * chunks) unfiltered from its stored bytes in[0..len) into dst, the
 * chunk_bytes sl_source_chunk_of says, with scratch
 * (sl_source_unfilter_bytes) to work in; only for samples
 * sl_source_chunk_of is true of. Errors as sl_source_unfilter. */
sl_status sl_source_unfilter_chunk(const sl_source *src, uint64_t i,
                                   const uint8_t *in, size_t len,
                                   uint8_t *scratch, uint8_t *dst, sl_err *err);
/* Number of classes and the name of class c (NULL if out of range). */
uint32_t sl_source_class_count(const sl_source *src);
const char *sl_source_class_name(const sl_source *src, uint32_t c);
/* Float targets per sample (0: none), and sample i's (NULL when 0). */
uint32_t sl_source_target_width(const sl_source *src);
const float *sl_source_targets(const sl_source *src, uint64_t i);
/* Sample i's boxes (NULL, *n = 0 when none, in a file without boxes, or
 * for a sample verify found damaged); held in memory since open, checked
 * then (finite, x0 <= x1, y0 <= y1, label below the class count). */
const sl_box *sl_source_boxes(const sl_source *src, uint64_t i, uint32_t *n);
/* Largest box count of any sample (0: the file has no boxes), and the
 * boxes of all samples. */
uint32_t sl_source_max_boxes(const sl_source *src);
uint64_t sl_source_box_total(const sl_source *src);
/* Sample i's name (the source path `sluice pack` recorded) into buf, NUL-
 * terminated; "" when the file records none. Reads the file (pread: safe
 * from any thread). Errors: SL_EINVAL (i out of range, cap below
 * name_len + 1), SL_EIO (the read failed: message names file and sample). */
sl_status sl_source_name(const sl_source *src, uint64_t i, char *buf,
                         size_t cap, sl_err *err);
/* "lmdb", "hdf5", "tfrecord" or "recordio", and the on-disk layout
 * version. */
const char *sl_source_format_name(const sl_source *src);
uint32_t sl_source_layout_version(const sl_source *src);
/* The entries' kind: "sluice", "caffe", "images", "array", "pickle",
 * "msgpack", "example" (TFRecord's tf.train.Example) or "irheader"
 * (RecordIO image records). */
const char *sl_source_entries_name(const sl_source *src);
/* Foreign layouts: entries that were not samples (`__keys__`, `__len__`,
 * `num-samples`, keys ending in `.meta`; RecordIO records without image
 * bytes, as InsightFace's header and identity records), skipped; Datums that
 * were SSD AnnotatedDatums (their boxes are not read). */
uint64_t sl_source_skipped(const sl_source *src);
/* Foreign LMDBs: the samples' order in words ("in LMDB key order", "in the
 * order of its __keys__ list ...", or key order and why the list is not
 * followed); "" for other formats, whose order is the file's. */
const char *sl_source_key_order(const sl_source *src);
/* Image folders opened with skip_bad_files: the files left out at open,
 * and the first of them with why ("" when none), "; "-separated. */
uint64_t sl_source_left_out(const sl_source *src, const char **names);
uint64_t sl_source_annotated(const sl_source *src);
/* HDF5 arrays: the datasets read, their shapes and axis order ("" for other
 * layouts). */
const char *sl_source_description(const sl_source *src);
/* Resolution levels (codec 7 samples, formats/core/levels.h): how many levels
 * the writer stored (0: a file without levels) and, for level k below
 * that, how many images it holds and their payload bytes (arrays of
 * SL_LEVELS_MAX). */
uint32_t sl_source_levels(const sl_source *src, uint64_t images[],
                          uint64_t bytes[]);
/* The writer's settings as recorded in the file ("" when none). */
const char *sl_source_writer_settings(const sl_source *src);
/* The open file descriptor (for io_uring, fadvise) and the file's size;
 * for a source of many files -1 and the size of their offset space. */
int sl_source_fd(const sl_source *src);
uint64_t sl_source_file_size(const sl_source *src);
/* A source of many files: its files as one offset space (the index's
 * offsets are in it), valid until close; NULL for a one-file source. */
const sl_file_set *sl_source_files(const sl_source *src);
/* Files in the source (1 for a one-file source), and the first sample of
 * file k < that (file k's samples run up to file k+1's first): the blocks
 * an order should keep together to read each file in sequence. */
uint64_t sl_source_file_count(const sl_source *src);
/* The bytes of the source's files at open: the file's size, or the sum of
 * the files' sizes for a source of many files (not their offset space,
 * which pads each file's base to 64 KiB). */
uint64_t sl_source_bytes(const sl_source *src);
uint64_t sl_source_file_first(const sl_source *src, uint64_t k);
/* A set at a URL (formats/shards/): its objects' cache (remote/cache.h),
 * valid until close; NULL for local files. sl_source_remote_file: file k's
 * URL (valid until close), size and crc32c, what sl_cache_get and
 * sl_cache_ahead take; false when k is not a remote file. */
sl_cache *sl_source_cache(const sl_source *src);
/* Where a set at a URL sends its requests, with which credentials
 * (remote/fetch.h), valid until close; NULL for local files. */
const sl_fetch_conf *sl_source_fetch_conf(const sl_source *src);
bool sl_source_remote_file(const sl_source *src, uint64_t k, const char **url,
                           uint64_t *size, uint32_t *crc);

/* Foreign shards at URLs: the bytes of the sidecar index the open read or
 * wrote (formats/files/shard_sidecar.h); 0 for every other source. */
uint64_t sl_source_sidecar_bytes(const sl_source *src);

/* Gets sample i's payload. With a mapped source *data points into the map
 * and buf is not touched; otherwise the payload is pread into buf (cap bytes,
 * at least the sample's length) and *data == buf. Errors: SL_EINVAL (i out of
 * range, cap too small), SL_EIO (a short or failed read: message names the
 * file and sample). */
sl_status sl_source_read(const sl_source *src, uint64_t i, void *buf,
                         size_t cap, const uint8_t **data, size_t *len,
                         sl_err *err);

#endif
