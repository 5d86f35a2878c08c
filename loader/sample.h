/* Where the workers' samples come from: an interface with one real
 * implementation (sample_source.c: a formats/ source read through an augment/
 * pipeline) and fakes in the tests, so the pool, the ring and the API can be
 * tested without images.
 *
 * Thread safety: load may run concurrently on different worker states; a
 * worker state is used by one thread at a time. ctx is read-only after
 * creation. */
#ifndef SLUICE_LOADER_SAMPLE_H
#define SLUICE_LOADER_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "loader/dmix_member.h"

struct sl_sampler;

typedef struct sl_sample_times {
  uint64_t read_ns, decode_ns, augment_ns;
  uint64_t bytes_read;
  uint64_t jpeg_samples, jpeg_windowed;
  uint64_t chunk_unfilters; /* HDF5 chunks whose filters were undone */
  uint64_t level_decodes[SL_LEVELS_MAX_PUBLIC]; /* by level decoded */
} sl_sample_times;

/* Where a load writes its sample's detection boxes: its part of the
 * batch's box arrays (sl_batch.boxes, box_labels, box_counts). The load
 * writes the first min(kept, cap) kept boxes in output pixels, zeros
 * (labels -1) in the rest of the cap, the count, and sets over to the kept
 * boxes that did not fit. */
typedef struct sl_box_dst {
  float *xyxy;     /* cap x 4 */
  int32_t *labels; /* cap */
  uint32_t *count;
  uint32_t cap;
  uint32_t over;
} sl_box_dst;

/* What batch mixing did to one batch (sl_batch's mix fields). */
typedef struct sl_mix_note {
  uint32_t kind;   /* 0 none, 1 Mixup, 2 CutMix */
  float lambda;    /* weight of each sample itself (1 with none) */
  uint32_t box[4]; /* CutMix: rows [box[0], box[1]), columns [box[2], box[3]) */
} sl_mix_note;

/* One complete batch in staging, handed to the source's batch_mix. */
typedef struct sl_mix_batch {
  uint64_t epoch, index; /* of the batch */
  void *data; /* n samples of h x w x channels in dtype, layout; NULL when
                 the backend mixes the pixels itself (the note tells it how) */
  int n, h, w, channels;
  int dtype, layout; /* sl_dtype, sl_layout of the staging buffer */
  const int32_t *labels;
  float *targets; /* n x soft_width floats to fill */
} sl_mix_batch;

/* The sample at position pos of an epoch's order. */
typedef uint64_t (*sl_order_at_fn)(const void *order, uint64_t pos);
/* A remote dataset's counters since open (remote/cache.h's sl_cache_stats):
 * objects fetched (by the workers and ahead of them) and their bytes,
 * opens of an object by a read that found it cached or had to wait for
 * it, and the time those waits took. */
typedef struct sl_sample_net {
  uint64_t fetches, bytes_fetched, hits, misses, wait_ns;
} sl_sample_net;

typedef struct sl_sample_src {
  void *ctx;
  uint64_t count;        /* samples in the dataset */
  int channels;          /* of every output sample: 3 or 1 */
  uint32_t target_width; /* floats of targets per sample; 0: none */
  /* A hash of what the samples are (the index: each sample's stored size,
   * shape, codec and label; the class names; the targets), made at open,
   * so that a resume can tell another dataset from this one. 0: none. */
  uint64_t fingerprint;
  /* Files left out at open (loader.on_error = skip on an image folder),
   * and the first of them with why ("" when none); valid while open. */
  uint64_t left_out;
  const char *left_out_names;
  /* Samples that are cheapest read together (a compressed HDF5 chunk's),
   * 0 or 1: none. quasi_random rounds loader.quasi_block up to a multiple
   * of it, so its blocks are whole chunks. */
  uint64_t block_samples;
  /* A dataset of many files each holding many samples (WebDataset
   * shards): the first sample of each of nfiles files (the source's,
   * valid while it is open); NULL, 0 otherwise. quasi_random's blocks are
   * then the files. */
  const uint64_t *file_first;
  uint64_t nfiles;
  /* Labels run below classes: the class names' count or the largest
   * label + 1, whichever is larger (0: unlabelled). */
  uint32_t classes;
  /* Several datasets mixed by weight (mix_source.c): the members, whose
   * indices follow one another (the sampler deals them, dmix_order.h); 0
   * and NULL for one dataset. Valid while the source is open. */
  uint32_t nmembers;
  const sl_dmix_member *members;
  /* With target_width > 0: writes sample index's targets to out. Called
   * after a successful load, from the worker, for the sample that ends up
   * in the batch (a replacement's when a bad one was skipped). */
  void (*targets)(void *ctx, uint64_t index, float *out);
  /* Detection boxes each batch holds per sample (0: none: load's boxes
   * argument is then NULL). */
  uint32_t box_capacity;
  /* Per-worker state (scratch sized for max_res), made at open. */
  sl_status (*worker_open)(void *ctx, int max_res, void **ws, sl_err *err);
  void (*worker_close)(void *ctx, void *ws);
  /* Writes sample `index` at res × res into dst (exactly the bytes the
   * loader computed for the dtype, layout and channels), its label and,
   * when boxes is not NULL, its boxes moved as its pixels were. Errors
   * name the sample. Adds its time to *t. */
  sl_status (*load)(void *ctx, void *ws, uint64_t index, uint64_t epoch,
                    int res, void *dst, int32_t *label, sl_box_dst *boxes,
                    sl_sample_times *t, sl_err *err);
  /* Frees ctx. May be NULL. */
  void (*close)(void *ctx);
  /* Optional (NULL: none), for a source that reads ahead in the epoch's
   * order (loader.io = uring, mmap hints). epoch_start: epoch `epoch` at
   * resolution res (what every load of it is passed); positions
   * [first, end) of the epoch, position p being sample at(order, p) (the
   * sampler's sl_sampler_at, or a mix's share of it), are about to be
   * claimed; called while no worker runs; a failure is the
   * source's to report from load. epoch_stop: the epoch ends; called before
   * the pool waits for its workers, so one blocked on a read wakes up.
   * position: worker state ws's next load is position pos (not called for
   * replacements of a bad sample). */
  void (*epoch_start)(void *ctx, sl_order_at_fn at, const void *order,
                      uint64_t epoch, int res, uint64_t first, uint64_t end);
  void (*epoch_stop)(void *ctx);
  void (*position)(void *ctx, void *ws, uint64_t pos);
  /* Optional (NULL: none): batch-level augmentation (Mixup/CutMix, soft
   * targets). Called by the mover thread on each complete batch before it
   * moves, while no worker writes that staging buffer; a pure function of
   * the batch and its (epoch, index). Batches then carry soft_width floats
   * of targets per sample (it fills them) instead of target_width, which
   * is then 0. */
  uint32_t soft_width;
  void (*batch_mix)(void *ctx, const sl_mix_batch *b, sl_mix_note *note);
  /* Optional (NULL: none, zeros): the network counters; any thread. */
  void (*net_stats)(void *ctx, sl_sample_net *out);
} sl_sample_src;

#endif
