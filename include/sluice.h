/*
 * sluice — feeds GPUs from image datasets far larger than RAM.
 *
 * The one public header. Every function says what it does, what it returns
 * on error, who owns what, and which thread may call it.
 *
 * Conventions
 *   - Objects are opaque handles made by a create or open function and freed
 *     by the matching destroy or close function, which accepts NULL.
 *   - Every fallible function returns an sl_status. SL_OK is 0. A failing call
 *     on an object leaves a message saying what and where (file, line, key,
 *     sample index) readable with that object's errmsg function until the next
 *     call on the same object.
 *   - The library keeps no global mutable state (one exception: the SIGBUS
 *     handler below), never prints and never exits; messages reach the
 *     caller through statuses and, for long-running objects, an optional log
 *     callback.
 *
 * Caveats (docs/FAULTS.md says more)
 *   - Files changing under a loader. A dataset truncated or rewritten in
 *     place while a loader reads it (`cp new.lmdb p.lmdb`, an NFS server's
 *     copy changing) or a disk sector that fails is SL_EIO for the samples
 *     it hits, naming file, sample and offset, with every loader.io:
 *     on_error = fail stops the epoch with it, skip replaces and counts the
 *     sample. The process lives. With loader.io = mmap the next epoch is
 *     refused (SL_EIO, "changed size") until the loader is reopened or the
 *     file has its old size again. A file replaced by rename (`mv new p`,
 *     what `sluice pack` does) is not a change: the open loader keeps
 *     reading the old file, whole, until it is reopened.
 *   - SIGBUS. With loader.io = mmap (what auto picks for a dataset that fits
 *     in memory), a mapped page that cannot be read raises SIGBUS. Opening
 *     such a loader installs a process-wide SIGBUS handler that recovers
 *     only faults on a sluice worker inside the sample it is copying out of
 *     the map, and passes every other SIGBUS to the handler installed before
 *     it (the default one kills the process, as without sluice). Limits:
 *     a handler the application installs after the loader opened replaces
 *     sluice's; the loader notices at the next epoch and reads with pread
 *     from then on (a WARN line). A thread that blocks SIGBUS cannot be
 *     rescued: the kernel kills the process on a blocked synchronous fault,
 *     so do not block SIGBUS in the thread that opens a loader (workers
 *     inherit its mask). A cut inside a page leaves the rest of that page
 *     reading as zeros, not as a fault: the one sample ending there may
 *     come back with a zero tail (its codec usually rejects it).
 *   - fork(). A loader's threads do not exist in a child process: use a
 *     loader only in the process that opened it (open one per child). The
 *     SIGBUS handler and the mappings are inherited; that is harmless.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Export macro -------------------------------------------------------- */
#if defined(SLUICE_STATIC)
#define SL_API
#elif defined(_WIN32)
#if defined(SLUICE_BUILDING)
#define SL_API __declspec(dllexport)
#else
#define SL_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define SL_API __attribute__((visibility("default")))
#else
#define SL_API
#endif

/* ---- Version ------------------------------------------------------------- */
#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0
#define SLUICE_VERSION_NUMBER                                                  \
  (SLUICE_VERSION_MAJOR * 10000 + SLUICE_VERSION_MINOR * 100 +                 \
   SLUICE_VERSION_PATCH)

/* Writes a size in binary units to buf (cap bytes, always NUL-terminated
 * when cap > 0): "512 B" below 1 KiB, else one decimal and KiB, MiB, GiB or
 * TiB ("1.5 MiB"), as the library's messages print sizes. Returns buf.
 * Thread-safe. */
SL_API const char *sl_format_bytes(uint64_t bytes, char *buf, size_t cap);

/* The library's version as "MAJOR.MINOR.PATCH", and as a number in the form of
 * SLUICE_VERSION_NUMBER. Compare either with the macros to detect a header and
 * library mismatch. Thread-safe. */
SL_API const char *sl_version_string(void);
SL_API unsigned sl_version_number(void);

/* ---- Status codes ---------------------------------------------------------
 * One table, X(name, value, description). Values are stable: a released code
 * is never renumbered; new codes are appended. */
#define SL_STATUS_MAP(X)                                                       \
  X(OK, 0, "success")                                                          \
  X(END, 1, "end of epoch: no more batches")                                   \
  X(EINVAL, 2, "invalid argument")                                             \
  X(ENOMEM, 3, "out of memory")                                                \
  X(EIO, 4, "I/O error")                                                       \
  X(ECONFIG, 5, "invalid configuration")                                       \
  X(EFORMAT, 6, "malformed or unsupported dataset file")                       \
  X(EDECODE, 7, "corrupt or undecodable image")                                \
  X(EUNSUPPORTED, 8, "unsupported feature or input")                           \
  X(ETOOBIG, 9, "size limit exceeded")                                         \
  X(ESTATE, 10, "call not valid in the object's current state")                \
  X(ENOTFOUND, 11, "not found")                                                \
  X(ECUDA, 12, "CUDA runtime error")                                           \
  X(ENODEV, 13, "no usable GPU device")                                        \
  X(ETHREAD, 14, "thread creation or synchronization failed")                  \
  X(ESAMPLE, 15, "a sample could not be loaded")

typedef enum sl_status {
#define SL_STATUS_ENUM_(name, value, desc) SL_##name = value,
  SL_STATUS_MAP(SL_STATUS_ENUM_)
#undef SL_STATUS_ENUM_
} sl_status;

/* A sentence describing the code ("invalid configuration"). Never NULL: an
 * unknown code gives "unknown status". Thread-safe; static storage. */
SL_API const char *sl_strerror(sl_status status);
/* The code's stable name ("SL_ECONFIG"), or "SL_UNKNOWN". Thread-safe. */
SL_API const char *sl_status_name(sl_status status);

/* ---- Logging ---------------------------------------------------------------
 * The library never prints. Objects that run for long (the loader) report
 * notable events, such as a fallback to another backend, through an optional
 * callback. It may be called from any of the object's threads, but never
 * concurrently for the same object. */
typedef enum sl_log_level {
  SL_LOG_DEBUG = 0,
  SL_LOG_INFO = 1,
  SL_LOG_WARN = 2,
  SL_LOG_ERROR = 3
} sl_log_level;
typedef void (*sl_log_fn)(void *user, sl_log_level level, const char *message);

/* ---- Configuration ---------------------------------------------------------
 * An sl_config holds every option of the loader, keyed "section.key" exactly
 * as in the INI file ("loader.batch_size"). One table of options (key, type,
 * default, bounds, help) drives the INI parser, sl_config_set, validation and
 * `sluice config --list`.
 *
 * Renamed keys keep their old names: dataset.layout reads and sets
 * dataset.entries, dataset.array_layout dataset.axis_order ("layout" is a
 * batch's NCHW/NHWC alone, augment.layout). Using an old name logs a note
 * (SL_LOG_INFO) through the config's log callback when one is set; setting
 * a key by both names, in one INI file or in sl_config_set calls, is an
 * SL_ECONFIG naming both (an INI file's values replace earlier calls'
 * whatever name they used). Listings and sl_option_info_get give the new
 * names only.
 *
 * Thread safety: an sl_config is not synchronised. Use one from one thread at
 * a time; once configured it may be read by any number of threads (the loader
 * copies what it needs at open, so the config may be destroyed after). */
typedef struct sl_config sl_config;

/* Creates a config holding every option's default. *out is NULL on error.
 * Returns SL_EINVAL for a NULL out, SL_ENOMEM. */
SL_API sl_status sl_config_create(sl_config **out);
/* Frees a config. Accepts NULL. */
SL_API void sl_config_destroy(sl_config *cfg);

/* Applies an INI file. Each "key = value" under "[section]" is set as
 * "section.key". A line starting with ';' or '#' is a comment, and so is
 * the rest of a line from a ';' or '#' that follows a space or tab
 * ("workers = 2  # per GPU"): a value cannot hold " ;" or " #" ("a#b" is
 * kept whole). Errors name the file, line, key, value and what is allowed;
 * an unknown key suggests the nearest known one; a key given twice in the
 * file is an error. Every error is reported, one a line of
 * sl_config_errmsg: each bad line, then each failing cross-field check
 * (see sl_config_validate) among the keys whose lines were good. A
 * relative path in dataset.path, dataset.label_file or
 * dataset.labels_path is taken from the INI file's folder (made absolute),
 * so the file works from any working directory; an absolute one is kept.
 * On error the config is unchanged: a file applies whole or not at all.
 * Returns SL_EIO when the file cannot be read, SL_ECONFIG for bad
 * contents. */
SL_API sl_status sl_config_load_ini(sl_config *cfg, const char *path);
/* As sl_config_load_ini, but the good lines apply even when others are bad:
 * for a checker that goes on to look further in the same run (`sluice
 * config --check` opens the dataset the good lines name). Returns as
 * sl_config_load_ini. */
SL_API sl_status sl_config_check_ini(sl_config *cfg, const char *path);
/* As sl_config_load_ini, on text in memory; name is used in messages
 * ("<string>" when NULL). A relative path stays as given (relative to the
 * working directory): text has no folder. */
SL_API sl_status sl_config_load_ini_string(sl_config *cfg, const char *text,
                                           const char *name);

/* Sets one option from its text form, with the same parser as the INI file:
 * sl_config_set(cfg, "device.vram_budget", "1GiB"). Returns SL_ECONFIG for an
 * unknown key (with a suggestion) or a bad value; the option is then
 * unchanged. Sizes take binary units, KiB MiB GiB TiB (2^10...; K M G T
 * alike), or decimal ones, kB MB GB TB (10^3...), in any case: "1 GB" and
 * "1 gb" are 10^9 bytes, "1 GiB" 2^30; a bare number is bytes. Cross-field
 * consistency is checked by sl_config_validate. */
SL_API sl_status sl_config_set(sl_config *cfg, const char *key,
                               const char *value);

/* Writes the option's current value in canonical text form (sizes in bytes
 * with a unit, lists comma-separated) to buf, always NUL-terminated. Returns
 * SL_ECONFIG for an unknown key, SL_ETOOBIG if len is too small. */
SL_API sl_status sl_config_get(const sl_config *cfg, const char *key, char *buf,
                               size_t len);

/* Checks relations between options (resolution.min <= resolution.max,
 * loader.rank < loader.world_size, list lengths...), each only where the
 * chosen setting reads its keys: min against max and start_epoch against
 * end_epoch with resolution.schedule = linear, each step of
 * resolution.steps against resolution.max with resolution.schedule =
 * steps, augment.scale and ratio with augment.crop = random_resized.
 * Returns SL_ECONFIG with a message naming the keys, one line for each
 * relation that fails. sl_loader_open calls it too. */
SL_API sl_status sl_config_validate(sl_config *cfg);

/* Installs a log callback used by loaders opened from this config. */
SL_API void sl_config_set_log(sl_config *cfg, sl_log_fn fn, void *user);

/* The message of the last failing call on cfg; "" if none. It may hold
 * several lines (every error of a file) and has no length limit. Valid
 * until the next call on cfg. */
SL_API const char *sl_config_errmsg(const sl_config *cfg);

/* Describes one option of the table, for listings and documentation. The
 * pointers are to static strings. */
typedef struct sl_option_info {
  const char *key;           /* "loader.batch_size" */
  const char *type;          /* "int", "size", "float", "floats", "enum", ... */
  const char *default_value; /* text form, as in an INI file */
  char allowed[128];         /* "1..65536", "mmap|pread|uring|auto", ... */
  const char *help;          /* one sentence */
} sl_option_info;

/* Number of options in the table. Thread-safe. */
SL_API size_t sl_option_count(void);
/* Fills *out for option i < sl_option_count(); SL_EINVAL otherwise. */
SL_API sl_status sl_option_info_get(size_t i, sl_option_info *out);

/* ---- Loader -----------------------------------------------------------------
 * A loader reads one dataset with `loader.workers` threads and hands out
 * batches in a fixed, reproducible order:
 *
 *   sl_loader *ld;
 *   if (sl_loader_open(&ld, cfg) != SL_OK) fail(sl_loader_errmsg(ld));
 *   for (epoch = 0; epoch < E; epoch++) {
 *     sl_loader_start_epoch(ld, epoch);   // resolution from the schedule
 *     sl_batch b;
 *     while ((st = sl_loader_next(ld, &b)) == SL_OK) {
 *       train_step(&b, stream);           // wait on b.ready first (GPU)
 *       sl_batch_release(ld, &b, stream); // slot reusable once stream passes
 *     }
 *     if (st != SL_END) fail(sl_loader_errmsg(ld));
 *   }
 *   sl_loader_close(ld);
 *
 * Determinism: the order of an epoch is a pure function of (loader.seed,
 * epoch, loader.rank, loader.world_size), and every augmentation draw of a
 * sample of (loader.seed, epoch, sample index); batches are bit-identical
 * for any number of workers, and resuming needs only the state blob.
 *
 * Sharding: each rank reads a disjoint part of every epoch (rank r the
 * r-th contiguous share of the epoch's order); all ranks get the same
 * number of batches, which keeps them in step: with loader.drop_last,
 * floor(N / (world * batch)) each; without it ceil(N / (world * batch)),
 * the epoch's order padded at its end by repeating samples from its start.
 * Padding comes last: a batch's samples [0, valid) are real and [valid, n)
 * padding (sl_batch.valid), and the last ranks may get batches of padding
 * only (valid 0), so that every rank still calls next as often. Over all
 * ranks the valid samples of an epoch are each sample exactly once.
 * Evaluation (loader.mode = eval) never drops, whatever loader.drop_last
 * says: count only the valid samples of each batch in a metric.
 *
 * Memory, all allocated and touched in sl_loader_open and never grown,
 * with B = batch_size bytes at the schedule's LARGEST resolution
 * (batch_size × res × res × channels × element size):
 *   staging   device.staging × B  (host memory; pinned with CUDA)
 *   slots     device.prefetch × B (host memory with the host backend;
 *             device memory, at most device.vram_budget, with CUDA)
 *   order     8 bytes per sample (+ 8 per quasi block), index 24 bytes per
 *             sample and targets 4 × K bytes per sample (see Datasets),
 *             per-worker decode scratch for a few crops of the largest
 *             resolution and a read buffer of the largest sample (every
 *             loader.io: mmap copies out of the map), 12 + 4 × K bytes per
 *             sample of each staging buffer and slot for labels, indices
 *             and targets; with detection boxes, 4 + 20 × C bytes per
 *             sample of each staging buffer and slot (C = box_capacity,
 *             loader.max_boxes or the dataset's largest count, at most
 *             SL_BOXES_MAX: 1.25 MiB a sample, so the open refuses what
 *             does not fit as for images), the dataset's boxes (8 bytes a
 *             sample, 24 a box) and 4 × C bytes per worker.
 *   chunks    HDF5 arrays of compressed chunks (h5py's gzip, lzf): a cache
 *             of decompressed chunks shared by the workers, at most
 *             dataset.chunk_cache bytes (default 256 MiB; never more than
 *             the whole array's), and per worker a scratch of twice the
 *             largest chunk (stored or decompressed); 4 bytes per chunk.
 *             Images that span chunks (h5py's auto-chunking): the cache
 *             holds rows of chunks (k images each), the read buffer is a
 *             row's stored span, the scratch one chunk's and one image;
 *             12 bytes per chunk. Chunked arrays may leave chunks never
 *             written (the fill value), so their shape, not their file,
 *             gives the samples: at most dataset.max_fill_samples (default
 *             65,536) samples may lie in such chunks, and as many such
 *             chunks, or the open fails with SL_ETOOBIG.
 * `sluice schedule CONFIG` prints these numbers for a config.
 *
 * Threads: sl_loader_open starts loader.workers workers (0: one per online
 * CPU) and one mover thread; none is created or destroyed afterwards.
 *
 * Thread safety: one consumer thread per loader. sl_loader_start_epoch,
 * next, release, save/restore_state, stats, errmsg and close must be called
 * from one thread at a time (normally the training loop's). The loader's own
 * threads never call back into the caller except through the log callback
 * of the config (see sl_config_set_log). */
typedef struct sl_loader sl_loader;

/* Element type and layout of batch data (augment.dtype, augment.layout). */
typedef enum sl_dtype {
  SL_DTYPE_U8 = 0,
  SL_DTYPE_FP16 = 1,
  SL_DTYPE_BF16 = 2,
  SL_DTYPE_FP32 = 3
} sl_dtype;
typedef enum sl_layout { SL_LAYOUT_NCHW = 0, SL_LAYOUT_NHWC = 1 } sl_layout;

/* A batch handed out by sl_loader_next. Everything it points to belongs to
 * the loader and stays valid and unchanged until sl_batch_release (or
 * sl_loader_close). Its data may be read from any thread; release it from
 * the loader's consumer thread. */
typedef struct sl_batch {
  void *data;              /* n samples back to back in dtype and layout;
                              a device pointer when on_device */
  const int32_t *labels;   /* host memory, n labels (-1: unlabelled) */
  const uint64_t *indices; /* host memory, dataset index of each sample */
  uint32_t n;              /* samples: always loader.batch_size (see
                              valid for how many are real) */
  uint32_t height, width;  /* this epoch's resolution */
  uint32_t channels;       /* 3 (RGB) or 1 */
  sl_dtype dtype;
  sl_layout layout;
  int on_device;         /* nonzero: data is device memory */
  uint32_t box_capacity; /* boxes per sample in the box arrays below
                            (loader.max_boxes; 0: no box arrays) */
  void *ready;           /* with CUDA: the cudaEvent_t itself (cast it:
                            cudaStreamWaitEvent(s, (cudaEvent_t)b.ready,
                            0)) to wait on before reading data; NULL when
                            data is ready on return */
  size_t bytes;          /* bytes of data */
  uint64_t epoch;        /* epoch of the batch */
  uint64_t index;        /* batch index within the epoch */
  uint64_t slot;         /* opaque: identifies the slot to release */
  const float *targets;  /* host memory, n × target_width float32 in batch
                            order (sample j's at targets + j × width);
                            NULL when the dataset has none */
  uint32_t target_width; /* floats per sample (sl_dataset_target_width) */
  uint32_t valid;        /* samples [0, valid) are real, [valid, n) padding
                            (repeats to ignore in metrics; see Sharding):
                            n except in the last batches of an epoch
                            without drop_last, and 0 for a batch that is
                            all padding */
  /* Batch mixing (augment.mixup, .cutmix: timm's Mixup): sample j was
   * mixed with sample n - 1 - j, weighing itself mix_lambda; targets are
   * then n × num_classes soft labels (rows sum to 1, label smoothing
   * applied first) and labels keep each sample's own class. */
  uint32_t mix_kind;   /* 0: not mixed, 1: Mixup, 2: CutMix */
  float mix_lambda;    /* 1 when not mixed */
  uint32_t mix_box[4]; /* CutMix: rows [box[0], box[1]) and columns
                          [box[2], box[3]) came from the partner */
  /* Detection boxes (datasets with boxes; NULL when box_capacity is 0),
   * in host memory, in output pixels of this batch (x0 y0 x1 y1, the
   * width x height image's edges at 0 and width / height), moved with
   * every crop, flip, resize and geometric op of the sample (see
   * Augmentation ops): sample j's box k at boxes + (j × box_capacity + k)
   * × 4, its class at box_labels[j × box_capacity + k], for k below
   * box_counts[j]; the rest of each sample's capacity is zero (labels
   * -1). A sample with more boxes than box_capacity keeps the first ones
   * (sl_loader_stats.boxes_over counts the rest). Mixed batches (mix_kind)
   * keep each sample's own boxes. These three pointers took the place of
   * the reserved words and box_capacity sits in what was padding after
   * on_device: the struct's size and every other offset are unchanged on
   * 64-bit platforms. */
  const float *boxes;
  const int32_t *box_labels;
  const uint32_t *box_counts;
} sl_batch;

/* Opens a loader on the config's dataset: checks cfg as sl_config_validate
 * does, opens and indexes the dataset, allocates every buffer (see Memory
 * above) and starts the threads. cfg is only read (several threads may open
 * loaders from one config at once) and may be destroyed afterwards.
 * Errors: SL_ECONFIG (also for host buffers, sized for the schedule's
 * largest resolution, beyond the memory available: refused with the bytes
 * before any is allocated), SL_EIO/SL_EFORMAT (dataset), SL_ENOMEM,
 * SL_ETHREAD, SL_ENODEV (device.backend = cuda without a usable GPU). On
 * failure *out
 * is still a handle that holds only the message: read it with
 * sl_loader_errmsg, then sl_loader_close it (every other call on it returns
 * SL_ESTATE). *out is NULL only for NULL arguments (SL_EINVAL) or when not
 * even the handle could be allocated. */
SL_API sl_status sl_loader_open(sl_loader **out, const sl_config *cfg);
/* Stops the threads (mid-epoch is fine: work in flight is abandoned) and
 * frees everything, including batches not yet released. Accepts NULL. */
SL_API void sl_loader_close(sl_loader *ld);

/* Starts an epoch (any number, in any order): computes its order and
 * resolution and sets the workers going. Allowed at any time: an epoch in
 * progress is abandoned cleanly; batches already handed out stay valid until
 * released. Returns SL_OK (SL_EINVAL for a NULL loader); a failure of the
 * loader's threads or device shows at the next sl_loader_next. */
SL_API sl_status sl_loader_start_epoch(sl_loader *ld, uint64_t epoch);
/* Waits for the next batch of the epoch and fills *batch. Returns SL_OK,
 * SL_END after the epoch's last batch, or an error: a sample that failed
 * with loader.on_error = fail (SL_EDECODE, SL_EIO... : the message names the
 * sample index; the epoch stops there and next keeps returning the error
 * until the next start_epoch), SL_ESTATE when no epoch is started or when
 * the caller holds every slot (device.prefetch batches) without releasing. */
SL_API sl_status sl_loader_next(sl_loader *ld, sl_batch *batch);
/* Hands back the batch the last sl_loader_next returned, unreleased and
 * unused: the next sl_loader_next returns the same batch again, and the
 * state (sl_loader_save_state) and stats no longer count it. For a consumer
 * interrupted between receiving a batch and using it (the Python binding
 * does so when Ctrl-C arrives during the wait), so that a state saved then
 * resumes with that batch. Clears *batch. Returns SL_EINVAL when batch is
 * not the last one handed out (another call came between, a start_epoch,
 * or it was released or handed back already). Consumer thread only. */
SL_API sl_status sl_loader_unget(sl_loader *ld, sl_batch *batch);
/* What sl_batch_release's stream may be besides a cudaStream_t: the caller
 * has finished with the data already (it synchronized, or read it on the
 * host), so the slot may be rewritten at once. */
#define SL_RELEASE_DONE ((void *)(intptr_t)-1)

/* Gives the batch's slot back. stream: the cudaStream_t the batch was used
 * on (the slot is rewritten only after the work queued on it so far
 * completes); NULL is the legacy default stream (handle 0, what PyTorch's
 * default stream is): the slot then waits for every blocking stream of the
 * loader's device, which costs nothing when the work is done;
 * SL_RELEASE_DONE says the caller is finished with the data. With the host
 * backend the stream is not used. Returns SL_EINVAL for a batch already
 * released, or not from this loader (the message says which; a batch of
 * another loader never releases one of this loader's); SL_ECUDA when the
 * release cannot be recorded on stream (a stream of another device...): the
 * loader then waits for stream itself before the slot is rewritten, or,
 * when even that fails, stops (next returns the error) rather than
 * rewrite a slot the stream may still read. */
SL_API sl_status sl_batch_release(sl_loader *ld, sl_batch *batch, void *stream);

/* Batches each epoch gives this rank (the same for every epoch and rank;
 * an epoch restored on another world size excepted: sl_loader_epoch_batches).
 */
SL_API uint64_t sl_loader_batches_per_epoch(const sl_loader *ld);
/* Samples in the dataset (a mix: in all its datasets). */
SL_API uint64_t sl_loader_sample_count(const sl_loader *ld);
/* Datasets mixed by weight (dataset.mix): how many; 1 for a loader on one
 * dataset (dataset.path), 0 for a loader whose open failed. A mix's sample
 * indices (sl_batch.indices) are its datasets' one after the other, in
 * dataset.mix's order. */
SL_API uint32_t sl_loader_source_count(const sl_loader *ld);
/* The dataset (0 .. source_count - 1) sample `index` is from, and in *local
 * (when not NULL) its index there; UINT32_MAX for an index past the
 * samples. */
SL_API uint32_t sl_loader_source_of(const sl_loader *ld, uint64_t index,
                                    uint64_t *local);
/* batch.sources: the dataset each of b's n samples is from, written to
 * sources[0 .. b->n). Errors: SL_EINVAL (NULL arguments, or an index past
 * the loader's samples: a batch of another loader is caught only so). */
SL_API sl_status sl_batch_sources(const sl_loader *ld, const sl_batch *b,
                                  uint32_t *sources);
/* The resolution (square side) of an epoch under the loader's schedule. */
SL_API uint32_t sl_loader_epoch_resolution(const sl_loader *ld, uint64_t epoch);

/* Resume. The state is (epoch, batches handed out in it) plus a check of
 * everything that decides what the batches hold: the settings of the order
 * (seed, batch size, order, drop_last, mode), the dataset (its sample
 * count, channels and a fingerprint: a hash of its index, class names and
 * targets, made at open, so another file or the same count of other
 * samples, or of the same in another order, is told apart; the same
 * samples in the other file format match), the schedule (the resolution.*
 * keys it uses), the augmentation (augment.*), dtype and layout; in a
 * versioned blob of SL_LOADER_STATE_BYTES (version 4, which records the
 * rank, world size and, in an epoch resumed on another world size, the
 * run it was resumed from; versions 3 and 2 of earlier releases restore,
 * the 96-byte version 1 is refused). save: writes it to buf (*len =
 * capacity in, bytes written out); with a NULL buf or a small *len, sets
 * *len and returns SL_ETOOBIG. SL_ESTATE before the first start_epoch.
 * restore: on a loader opened with the same settings and data (else
 * SL_ESTATE naming only what differs; SL_EINVAL for a damaged blob or
 * another version), starts the saved epoch where the saved run left it.
 *
 * Elastic resume. A data-parallel job saves at the same step on every
 * rank, so every rank has read the same number of batches; the state of
 * any one rank then says what the whole job read. Restored on the same
 * world size (any rank of it), the following next calls return exactly
 * the batches an uninterrupted run would have returned. Restored on
 * another world size W' (loader.world_size), the samples the W saved
 * ranks had not read yet are dealt, in the saved epoch's order, to the W'
 * ranks: each is read exactly once more across them, none twice, none
 * lost, and the same W' from the same state gives the same batches, for
 * any worker count. loader.batch_size stays per rank (the global batch
 * becomes W' x batch_size: scale it, or the learning rate, yourself).
 * That epoch then has ceil(left / (W' x batch_size)) batches per rank
 * (sl_loader_epoch_batches), padded as an epoch is (sl_batch.valid);
 * with loader.drop_last, floor of it, the last left mod (W' x batch_size)
 * samples of the rest (the tails of the last old ranks) being dropped
 * besides what the saved run's epoch dropped. Later epochs are dealt on
 * W' ranks as usual. An epoch already resumed on another world size
 * resumes again on any: what its ranks had not read of their deal is dealt
 * the same way, up to 8 resumes on another world size within one epoch
 * (then SL_ESTATE says so). The worker count may change too. The blob grew
 * from 128 bytes (version 4, still read) to 256 in version 5, which holds
 * those earlier deals. */
#define SL_LOADER_STATE_BYTES 256
SL_API sl_status sl_loader_save_state(sl_loader *ld, void *buf, size_t *len);
SL_API sl_status sl_loader_restore_state(sl_loader *ld, const void *buf,
                                         size_t len);
/* Batches the epoch in progress gives this rank: sl_loader_batches_per_epoch,
 * but for an epoch restored on another world size, its deal of the rest
 * (see Elastic resume). 0 before any epoch. */
SL_API uint64_t sl_loader_epoch_batches(const sl_loader *ld);

/* What a state blob says, for a log line or to see why a resume is
 * refused. Caller-allocated; reserved words are zero. */
typedef struct sl_loader_state_info {
  uint32_t version;      /* of the blob (2 to 5) */
  uint32_t mode;         /* 0 train, 1 eval */
  uint64_t epoch;        /* the epoch in progress */
  uint64_t batches;      /* batches of it each rank had read */
  uint64_t samples_read; /* real samples of the epoch read, all ranks
                            together (padding not counted) */
  uint64_t samples_left; /* real samples of the epoch still to read */
  uint64_t sample_count; /* samples in the dataset */
  uint64_t batch_size;   /* per rank */
  uint64_t rank, world_size;
  uint64_t seed;
  uint32_t order;     /* 0 sequential, 1 random, 2 quasi_random */
  uint32_t drop_last; /* 0 or 1 */
  uint32_t dtype, layout, channels;
  /* An epoch resumed on another world size: the world size of the run it
   * was last resumed from and the batches each of its ranks had read; 0, 0
   * otherwise (batches then counts in the new deal). */
  uint32_t resumed_from_world;
  uint64_t resumed_from_batches;
  uint64_t dataset_fingerprint, schedule_fingerprint, augment_fingerprint;
  uint64_t resumes; /* times the epoch was resumed on another world size */
  uint64_t reserved[7];
} sl_loader_state_info;
/* Fills *out from a blob of sl_loader_save_state (len bytes; no loader
 * needed, any thread). Returns SL_EINVAL (out zeroed) for NULL arguments,
 * a blob that is not a loader state, damaged, truncated, of version 1 or
 * of a version this library does not read. */
SL_API sl_status sl_loader_state_info_get(const void *blob, size_t len,
                                          sl_loader_state_info *out);

/* Most resolution levels a sample may hold, level 0 (full size) included
 * (SL_IMAGE_JPEG_LEVELS, below). */
#define SL_LEVELS_MAX_PUBLIC 4

/* Counters since open (times summed over workers) and the current epoch's
 * rate. */
#define SL_STATS_BAD_KEEP 16
typedef struct sl_loader_stats {
  uint64_t epoch;                  /* current epoch */
  uint64_t batches;                /* batches handed out, since open */
  uint64_t samples;                /* samples loaded by workers, since open */
  uint64_t skipped;                /* bad samples replaced (on_error = skip) */
  uint64_t failed;                 /* samples that failed for good */
  uint64_t bad[SL_STATS_BAD_KEEP]; /* latest bad sample indices, newest first */
  uint32_t nbad;                   /* valid entries of bad */
  uint64_t bytes_read;             /* encoded bytes read from the dataset */
  uint64_t read_ns, decode_ns, augment_ns; /* worker time per stage */
  uint64_t staging_wait_ns;  /* workers waiting for a free staging buffer */
  uint64_t slot_wait_ns;     /* mover waiting for the consumer to release */
  uint64_t consumer_wait_ns; /* sl_loader_next waiting for a batch */
  uint64_t epoch_batches;    /* batches handed out in the current epoch */
  double epoch_seconds;      /* since start_epoch */
  double images_per_s;       /* epoch_batches × n / epoch_seconds */
  uint32_t workers;          /* worker threads */
  const char *backend;       /* "host" or "cuda" (static string) */
  const char *backend_note;  /* why device.backend = auto fell back to host
                                memory ("" otherwise); valid while open */
  uint64_t jpeg_samples;     /* JPEG samples decoded */
  uint64_t jpeg_windowed;    /* of which only the crop's restart segments
                                were read: files written by `sluice pack`
                                (without --keep-jpeg); the others are read
                                from their first row */
  uint64_t chunk_unfilters;  /* HDF5 chunks decompressed (filters undone)
                                by the workers, since open: one per sample
                                read from a filtered chunk */
  /* Samples of files with resolution levels decoded from level k (0: full
   * size), k < SL_LEVELS_MAX_PUBLIC; all zero for files without levels. */
  uint64_t level_decodes[SL_LEVELS_MAX_PUBLIC];
  /* Detection boxes left out of batches because a sample kept more than
   * loader.max_boxes after its augmentation, and the samples that did. */
  uint64_t boxes_over;
  uint64_t box_samples_over;
  /* Image files of a folder found unreadable at open and left out of the
   * dataset (loader.on_error = skip; with fail they fail the open):
   * sl_loader_left_out names the first. */
  uint64_t left_out;
  /* A dataset at a URL (docs/REMOTE.md): shards downloaded into the cache
   * (by the workers or fetched ahead of them) and the bytes received;
   * reads that found their shard cached (cache_hits, one a sample read)
   * or had to wait for its download (cache_misses), and the workers' time
   * spent so waiting. All zero for local files. */
  uint64_t fetches;
  uint64_t bytes_fetched;
  uint64_t cache_hits;
  uint64_t cache_misses;
  uint64_t fetch_wait_ns;
} sl_loader_stats;
SL_API sl_status sl_loader_stats_get(sl_loader *ld, sl_loader_stats *out);
/* The first files stats.left_out counts, each with why ("DIR: file
 * album/x.jpg: value is not an image file ..."), "; "-separated; "" when
 * none. Valid while ld is open. */
SL_API const char *sl_loader_left_out(const sl_loader *ld);

/* The fields of sl_loader_stats in order, for code that
 * walks them: bindings building a dict, printers, snapshot differences. The
 * library checks at compile time that this list and the struct agree. Each
 * row is X(TYPE, name, count, KIND):
 *   TYPE   U64 (uint64_t), U32 (uint32_t), F64 (double), STR (const char *)
 *   count  1, or the array's length
 *   KIND   TOTAL   counted since open: two snapshots' difference is what
 *                  happened between them (arrays: per index)
 *          NOW     a value at the time of the call
 *          RECENT  the latest entries, newest first; the LEN row after it
 *                  says how many are valid
 *          LEN     the valid entries of the RECENT row before it
 * Bindings show an array of TOTALs as one key per index, the index after
 * the name's first word (level_decodes[1]: level1_decodes), a RECENT row as
 * a list of its valid entries, and no LEN row. New fields are added at the
 * end (the struct has no reserved words left: a new field grows it). */
#define SL_LOADER_STATS_FIELDS(X)                                              \
  X(U64, epoch, 1, NOW)                                                        \
  X(U64, batches, 1, TOTAL)                                                    \
  X(U64, samples, 1, TOTAL)                                                    \
  X(U64, skipped, 1, TOTAL)                                                    \
  X(U64, failed, 1, TOTAL)                                                     \
  X(U64, bad, SL_STATS_BAD_KEEP, RECENT)                                       \
  X(U32, nbad, 1, LEN)                                                         \
  X(U64, bytes_read, 1, TOTAL)                                                 \
  X(U64, read_ns, 1, TOTAL)                                                    \
  X(U64, decode_ns, 1, TOTAL)                                                  \
  X(U64, augment_ns, 1, TOTAL)                                                 \
  X(U64, staging_wait_ns, 1, TOTAL)                                            \
  X(U64, slot_wait_ns, 1, TOTAL)                                               \
  X(U64, consumer_wait_ns, 1, TOTAL)                                           \
  X(U64, epoch_batches, 1, NOW)                                                \
  X(F64, epoch_seconds, 1, NOW)                                                \
  X(F64, images_per_s, 1, NOW)                                                 \
  X(U32, workers, 1, NOW)                                                      \
  X(STR, backend, 1, NOW)                                                      \
  X(STR, backend_note, 1, NOW)                                                 \
  X(U64, jpeg_samples, 1, TOTAL)                                               \
  X(U64, jpeg_windowed, 1, TOTAL)                                              \
  X(U64, chunk_unfilters, 1, TOTAL)                                            \
  X(U64, level_decodes, SL_LEVELS_MAX_PUBLIC, TOTAL)                           \
  X(U64, boxes_over, 1, TOTAL)                                                 \
  X(U64, box_samples_over, 1, TOTAL)                                           \
  X(U64, left_out, 1, NOW)                                                     \
  X(U64, fetches, 1, TOTAL)                                                    \
  X(U64, bytes_fetched, 1, TOTAL)                                              \
  X(U64, cache_hits, 1, TOTAL)                                                 \
  X(U64, cache_misses, 1, TOTAL)                                               \
  X(U64, fetch_wait_ns, 1, TOTAL)

/* The message of the last failing call on ld; "" if none. Valid until the
 * next call on ld. */
SL_API const char *sl_loader_errmsg(const sl_loader *ld);

/* ---- Augmentation ops -------------------------------------------------------
 * The per-sample ops of augment.auto, .color_jitter, .grayscale, .blur and
 * .erasing, callable on one image: exactly the code the workers run, for
 * tests and for showing what a config does. Each is torchvision's
 * functional op on a uint8 tensor (torchvision.transforms.functional,
 * whose tensor semantics v2 kept), with its parameter names:
 *   rotate          angle (degrees, counter-clockwise, about the center
 *                   or center), interpolation, fill
 *   affine          angle, translate (pixels), scale, shear (degrees),
 *                   center, interpolation, fill
 *   shear_x/_y      shear[0] / shear[1] degrees about the top-left corner
 *                   (the policies' ShearX/ShearY), interpolation, fill
 *   translate_x/_y  translate[0] / translate[1] pixels, interpolation, fill
 *   adjust_brightness, adjust_contrast, adjust_saturation,
 *   adjust_sharpness  factor (>= 0; torchvision's *_factor)
 *   adjust_hue      factor in [-0.5, 0.5] (hue_factor)
 *   posterize       bits (0..8);  solarize  threshold
 *   autocontrast, equalize, invert, rgb_to_grayscale (3 equal channels),
 *   hflip
 *   gaussian_blur   kernel_size (odd, 1..255), sigma (> 0)
 *   erase           i, j, h, w, value (per channel, 0..255)
 * Pixels are height rows of width pixels of channels bytes (1: gray, 3:
 * RGB), transformed in place. Where sluice differs from torchvision: fill
 * is taken per channel and rounded to a byte; gaussian_blur mirrors again
 * where a kernel is wider than the image (torchvision refuses); colour
 * means and convolutions sum in another order, which moves a pixel by at
 * most 1. Thread safety: no state; any thread, any number at once.
 * Memory: each call allocates 24 bytes a pixel and 32 a column of scratch
 * and frees it. */
typedef struct sl_augment_args {
  double angle;        /* rotate, affine: degrees */
  double translate[2]; /* affine, translate_x/_y: pixels */
  double scale;        /* affine: 0 means 1 */
  double shear[2];     /* affine, shear_x/_y: degrees */
  int has_center;      /* nonzero: center (pixels) instead of the middle */
  double center[2];
  int interpolation; /* 0 nearest, 1 bilinear */
  int has_fill;      /* zero: outside pixels 0 (torchvision's fill=None) */
  double fill[3];
  double factor;        /* the adjust_* ops */
  int bits;             /* posterize */
  double threshold;     /* solarize */
  int kernel_size[2];   /* gaussian_blur: x, y */
  double sigma[2];      /* gaussian_blur: x, y */
  int i, j, h, w;       /* erase: top, left, height, width */
  double value[3];      /* erase */
  uint64_t reserved[8]; /* zero: room for parameters, the size stays */
} sl_augment_args;

/* Applies op to the image. Errors: SL_EINVAL (unknown op: the message
 * lists them; a parameter out of range, named; channels not 1 or 3; a
 * zero or huge size), SL_ENOMEM. msg (may be NULL) receives the message. */
SL_API sl_status sl_augment_apply(const char *op, const sl_augment_args *args,
                                  uint8_t *pixels, uint32_t height,
                                  uint32_t width, uint32_t channels, char *msg,
                                  size_t msg_len);

/* Moves n detection boxes (x0 y0 x1 y1 floats each, in place, in the
 * pixel-edge coordinates of a width x height image: the image is [0,
 * width] x [0, height]) as op moves the image's pixels, with the same
 * arguments as sl_augment_apply: rotate, affine, shear_x, shear_y,
 * translate_x, translate_y (each box becomes the enclosing axis-aligned
 * box of its four corners mapped by the op's affine matrix, the inverse
 * of the one the pixels are sampled through) or hflip; then clipped to
 * the image. This is what the loader does to a sample's boxes for its
 * recipe's geometric ops, and torchvision v2's affine on BoundingBoxes
 * (without its expand). Errors: SL_EINVAL (another op: the message lists
 * these; an argument out of range; NULL boxes with n > 0; a zero or huge
 * size). Thread safety: no state. */
SL_API sl_status sl_augment_boxes(const char *op, const sl_augment_args *args,
                                  float *boxes, uint32_t n, uint32_t height,
                                  uint32_t width, char *msg, size_t msg_len);

/* The ops sl_augment_apply knows, for bindings and tests that walk them:
 * op i (from 0) into *out, in a fixed order; returns 1, or 0 (out left
 * alone) past the last op or with a NULL out. The strings are static.
 * Thread safety: no state. */
typedef struct sl_augment_op_info {
  const char *name;        /* as sl_augment_apply takes it: "rotate" */
  const char *params;      /* torchvision's keyword parameters, space-separated:
                              "angle center interpolation fill"; "keyword:field"
                              where the sl_augment_args field is named otherwise
                              ("hue_factor:factor"); "" for none */
  int moves_boxes;         /* nonzero: sl_augment_boxes takes it too */
  const void *reserved[4]; /* NULL: room for more, the size stays */
} sl_augment_op_info;
SL_API int sl_augment_op_get(uint32_t i, sl_augment_op_info *out);

/* One op an automatic policy drew: torchvision's name ("ShearX", ...)
 * and the magnitude _apply_op receives, sign included. */
typedef struct sl_augment_step {
  char op[16];
  double magnitude;
} sl_augment_step;
#define SL_AUGMENT_MAX_STEPS 16

/* The ops cfg's augment.auto policy draws for sample index of epoch at
 * width x height, as the workers draw them (the same seed, the same
 * stream): *n receives how many (0 with augment.auto = none), at most
 * SL_AUGMENT_MAX_STEPS. Errors: SL_ECONFIG (cfg invalid: cfg is only read,
 * so sl_config_validate gives the message), SL_EINVAL (NULL arguments). */
SL_API sl_status sl_augment_policy_draw(const sl_config *cfg, uint64_t epoch,
                                        uint64_t index, uint32_t width,
                                        uint32_t height, sl_augment_step *out,
                                        uint32_t *n);

/* Everything cfg's recipe draws for sample index of epoch at width x
 * height, as the workers draw it (the same stream, the same order): the
 * policy's steps, then ColorJitter (jitter: applied; jitter_order: the
 * permutation of brightness 0, contrast 1, saturation 2, hue 3 that
 * ColorJitter.get_params calls fn_idx; jitter_factor: brightness,
 * contrast, saturation and hue factors, an unconfigured one 1 (hue 0) and
 * skipped), RandomGrayscale, GaussianBlur's sigma and RandomErasing's box
 * (top, left, height, width of the width x height sample). Errors as
 * sl_augment_policy_draw. */
typedef struct sl_augment_draw {
  uint32_t n_steps;
  sl_augment_step steps[SL_AUGMENT_MAX_STEPS];
  int jitter;
  int jitter_order[4];
  double jitter_factor[4];
  int grayscale;
  int blur;
  double blur_sigma;
  int erase;
  int erase_i, erase_j, erase_h, erase_w;
  uint64_t reserved[8]; /* zero: room for more ops, the size stays */
} sl_augment_draw;
SL_API sl_status sl_augment_recipe_draw(const sl_config *cfg, uint64_t epoch,
                                        uint64_t index, uint32_t width,
                                        uint32_t height, sl_augment_draw *out);

/* ---- Datasets ---------------------------------------------------------------
 * A dataset is one file written by `sluice pack` or by an sl_writer (LMDB or
 * HDF5), or a file that other tools wrote (an LMDB of Caffe Datums, of
 * JPEG/PNG files or of pickled or msgpack (image, label) records, an h5py
 * array, WebDataset shards, an ImageFolder, a TFRecord of
 * tf.train.Example, an MXNet RecordIO .rec: sl_dataset_entries),
 * opened for random access, as
 * mdb_get is for LMDB:
 *
 *   sl_dataset *ds;
 *   if (sl_dataset_open_file(&ds, "train.lmdb") != SL_OK) {
 *     fail(sl_dataset_errmsg(ds));   // ds holds only the message
 *     sl_dataset_close(ds);
 *   }
 *   for (uint64_t i = 0; i < sl_dataset_count(ds); i++) {
 *     sl_sample_meta m;
 *     sl_dataset_info(ds, i, &m);     // label, size, codec, targets
 *     sl_dataset_decode(ds, i, pixels, cap, &len);  // u8 HWC, full size
 *   }
 *   sl_dataset_close(ds);
 *
 * Opening indexes the file once (no sample value is read); afterwards no
 * LMDB or HDF5 call is made: bytes are read from the file with pread.
 *
 * Thread safety: a dataset is read-only after open. Every function but
 * close may be called from any number of threads at once; close only once
 * no other thread uses it.
 *
 * Memory, all allocated at open and never grown: the index, 24 bytes per
 * sample (32 for an LMDB other tools wrote: its keys are the names); the
 * targets, 4 × target_width bytes per sample; the boxes of a file that
 * has them, 8 bytes a sample and 24 a box; the class names; 4 bytes
 * per chunk of an HDF5 array of compressed chunks, 12 when images span
 * chunks (whose samples sl_dataset_read and decode give decompressed,
 * allocating the chunk, or the row of chunks, and its scratch for the
 * call).
 * Sample names stay in the file. sl_dataset_decode allocates a decoder's
 * scratch for the one image ((width + 32) × height × 4 bytes plus about
 * 2 MiB) and frees it before it returns.
 *
 * Errors: a failing call leaves its message (naming the file, the sample
 * and what is wrong) in the dataset; sl_dataset_errmsg reads the latest. When
 * several threads read at once, the latest may be another thread's: use
 * sl_dataset_errmsg_copy right after the failing call, or one dataset per
 * thread. */
typedef struct sl_dataset sl_dataset;

/* How a sample is stored. Values are stable (they are on disk). */
typedef enum sl_image_codec {
  SL_IMAGE_JPEG = 1,
  SL_IMAGE_PNG = 2,
  SL_IMAGE_RAW = 3, /* u8 HWC pixels, height × width × channels bytes */
  /* u8 CHW planes, channels × height × width bytes (Caffe's raw Datums):
   * planes in R, G, B order, or in B, G, R order. Read, never written. */
  SL_IMAGE_RAW_CHW = 4,
  SL_IMAGE_RAW_CHW_BGR = 5,
  SL_IMAGE_WEBP = 6, /* read from other tools' LMDBs; alpha dropped */
  /* A JPEG stored at several resolutions (sl_writer_options.levels): the
   * stored bytes are a level record (docs/FORMATS.md); sl_image_level
   * finds each level's JPEG, and width and height are level 0's. */
  SL_IMAGE_JPEG_LEVELS = 7
} sl_image_codec;

/* The JPEG of level `level` of a level record bytes[0..len) (what
 * sl_dataset_read gives for an SL_IMAGE_JPEG_LEVELS sample): *jpeg points
 * into bytes, *jpeg_len, *width and *height are that level's. Returns the
 * record's number of levels (1..SL_LEVELS_MAX_PUBLIC), or 0 when bytes is not a
 * well-formed level record or level is out of range. A pure function:
 * thread-safe. */
SL_API int sl_image_level(const void *bytes, size_t len, uint32_t level,
                          const uint8_t **jpeg, size_t *jpeg_len,
                          uint32_t *width, uint32_t *height);

/* Index bytes a dataset holds per sample (plus 4 × target_width). */
#define SL_INDEX_BYTES_PER_SAMPLE 24

/* Longest sample name and class name, in bytes without the NUL. */
#define SL_SAMPLE_NAME_MAX 4095
#define SL_CLASS_NAME_MAX 255
/* Most float targets a sample may carry; most classes a file may declare. */
#define SL_TARGETS_MAX 65536
#define SL_CLASSES_MAX (1u << 20)

/* One annotation box in the stored image's pixel coordinates (x to the
 * right, y down, x0 <= x1, y0 <= y1; a box may reach past the image's
 * edge, as COCO's do), its class and flags. */
#define SL_BOX_CROWD 1u     /* COCO iscrowd: a region of many objects */
#define SL_BOX_DIFFICULT 2u /* Pascal VOC <difficult>1</difficult> */
typedef struct sl_box {
  float x0, y0, x1, y1;
  int32_t label;  /* class index (>= 0) */
  uint32_t flags; /* SL_BOX_* */
} sl_box;
/* Most boxes a sample may carry. */
#define SL_BOXES_MAX 65535

/* What the index knows of one sample. */
typedef struct sl_sample_meta {
  int32_t label;        /* class index, or -1 when unlabelled */
  sl_image_codec codec; /* 0 for a sample verify found damaged */
  uint32_t width, height;
  uint32_t channels;     /* 1 (gray) or 3 (RGB) */
  uint32_t target_width; /* floats at targets */
  const float *targets;  /* the sample's targets, NULL when target_width is
                            0; owned by the dataset, valid until close */
  uint64_t stored_bytes; /* what sl_dataset_read gives */
  uint32_t name_bytes;   /* strlen of its name (0: none recorded) */
  uint32_t box_count;    /* its boxes (sl_dataset_boxes); 0: none */
  uint64_t reserved[4];
} sl_sample_meta;

/* Opens the dataset at the config's dataset.path (dataset.format: auto
 * detects it from the file's contents or the path's form, docs/FORMATS.md;
 * .image_key, .label_key and .label_offset say how to read a TFRecord's
 * Examples; dataset.entries,
 * .channel_order, .label_file and .lmdb_db say how to read an LMDB other tools
 * wrote; .images, .labels, .targets, .labels_path, .label_from, .lengths and
 * .axis_order an HDF5 array file, docs/FORMATS.md; .chunk_cache is the
 * loader's: a dataset undoes a filtered chunk on each read and keeps no cache).
 * cfg is only read: several threads may open datasets from one config at once.
 * Errors: SL_ECONFIG (no dataset.path, a dataset.entries (or other) option that
 * does not fit the file), SL_EIO (cannot open or read the file or the label
 * file), SL_EFORMAT (not a dataset sluice reads, an unknown layout version,
 * damage: the message names the file and the sample or key, and for
 * sluice's own files says how to re-create it), SL_ENOMEM.
 * On failure *out is still a handle that holds only the message: read it
 * with sl_dataset_errmsg, then sl_dataset_close it (other calls on it
 * return SL_ESTATE, or 0 for the counts). *out is NULL only for a NULL cfg
 * (SL_EINVAL) or when not even the handle could be allocated (SL_ENOMEM). */
SL_API sl_status sl_dataset_open(sl_dataset **out, const sl_config *cfg);
/* As sl_dataset_open with dataset.path = path and the other keys at their
 * defaults (the layout detected, raw Caffe Datums read as BGR and HDF5
 * arrays as RGB, no label file, the main database, the HDF5 datasets
 * detected). */
SL_API sl_status sl_dataset_open_file(sl_dataset **out, const char *path);

/* Verify mode, for checking a file: as sl_dataset_open_file, but a damaged
 * sample (out-of-range offset, bad record header, label or shape, a header
 * that disagrees with the index) is reported to on_bad, from the opening
 * thread, with its index and a reason naming the key or offset, and is then
 * unusable (info gives codec 0; read and decode return SL_EFORMAT) instead
 * of failing the open. Every record header is read, so this open costs one
 * read per sample. Damage to the file's structure still fails it. */
typedef void (*sl_dataset_bad_fn)(void *user, uint64_t index,
                                  const char *reason);
SL_API sl_status sl_dataset_open_verify(sl_dataset **out, const char *path,
                                        sl_dataset_bad_fn on_bad, void *user);

/* Closes the file and frees everything. Accepts NULL. */
SL_API void sl_dataset_close(sl_dataset *ds);
/* The latest failure's message; "" if none. Valid until the next failing
 * call on ds or close. sl_dataset_errmsg(NULL) says no handle exists. */
SL_API const char *sl_dataset_errmsg(const sl_dataset *ds);
/* Copies the latest message into buf (always NUL-terminated when cap > 0).
 * Returns its full length, as snprintf does. Thread-safe. */
SL_API size_t sl_dataset_errmsg_copy(const sl_dataset *ds, char *buf,
                                     size_t cap);

/* Samples, classes, and floats of targets per sample (0: none). */
SL_API uint64_t sl_dataset_count(const sl_dataset *ds);
SL_API uint32_t sl_dataset_class_count(const sl_dataset *ds);
/* The name of class label ("n01440764", "cat"), or NULL when label is not
 * below sl_dataset_class_count. Valid until close. */
SL_API const char *sl_dataset_class_name(const sl_dataset *ds, uint32_t label);
SL_API uint32_t sl_dataset_target_width(const sl_dataset *ds);

/* The file: "lmdb", "hdf5", "tfrecord", "recordio", "webdataset" or
 * "folder"; its on-disk layout version (0 for the foreign formats); its
 * size in bytes at open (for a dataset of many files -- shards, a folder
 * -- the sum of their sizes); the number of files it reads (1 but for
 * shards and folders); and the writer's settings as recorded ("" when
 * none). */
SL_API const char *sl_dataset_format(const sl_dataset *ds);
SL_API uint32_t sl_dataset_layout_version(const sl_dataset *ds);
SL_API uint64_t sl_dataset_file_size(const sl_dataset *ds);
SL_API uint64_t sl_dataset_file_count(const sl_dataset *ds);
SL_API const char *sl_dataset_writer_settings(const sl_dataset *ds);
/* Resolution levels the writer recorded: returns their number (0: the file
 * has none) and, when images/bytes are not NULL (room for
 * SL_LEVELS_MAX_PUBLIC each), how many images hold level k and the bytes
 * of their level-k JPEGs. */
SL_API uint32_t sl_dataset_levels(const sl_dataset *ds, uint64_t *images,
                                  uint64_t *bytes);
/* What the file's entries hold (the kind dataset.entries names): "sluice"
 * (files sluice wrote), "array" (HDF5 pixel arrays: sl_dataset_description),
 * "caffe" (Caffe Datums: labels as stored,
 * float_data as targets, no class names), "images" (each value a JPEG or
 * PNG file; labels from dataset.label_file, else -1), "pickle" (each value
 * pickle.dumps((image bytes, label)), as folder2lmdb.py writes),
 * "msgpack" (each value msgpack [image bytes, label], as tensorpack's
 * LMDBSerializer writes): labels as stored, else -1; "example" (TFRecord:
 * tf.train.Example records, the image from dataset.image_key, the label
 * from dataset.label_key as stored, plus dataset.label_offset) or
 * "irheader" (MXNet RecordIO image records: the IRHeader's label, or its
 * flag float labels as targets). "" for a handle that did not open. */
SL_API const char *sl_dataset_entries(const sl_dataset *ds);
/* The same, by its older name (kept: "layout" now means only a batch's
 * NCHW/NHWC, and a file's layout version). */
SL_API const char *sl_dataset_layout_name(const sl_dataset *ds);
/* Layout "array" (an HDF5 file h5py or MATLAB wrote: a uint8 pixel array
 * (N,H,W), (N,H,W,C) or (N,C,H,W), contiguous, beside optional labels and
 * targets; dataset.images, .labels, .targets, .axis_order): the datasets
 * read, their shapes, axis and channel order, e.g. "images /x (6, 20, 24, 3)
 * uint8, NHWC RGB, contiguous at offset 2048; labels /y (6,)". "" for other
 * layouts and for a handle that did not open. */
SL_API const char *sl_dataset_description(const sl_dataset *ds);
/* Caffe and images layouts: LMDB entries skipped as not samples
 * (`__keys__`, `__len__`, `num-samples`, keys ending in `.meta`), and
 * samples that were SSD AnnotatedDatums (their boxes are not read). */
SL_API uint64_t sl_dataset_skipped_entries(const sl_dataset *ds);
/* LMDBs sluice did not write (layouts caffe, images, pickle, msgpack): the
 * order of the samples, in words. A `__keys__` entry (folder2lmdb.py's
 * pickled list of the keys, tensorpack's msgpack one) gives sample i as
 * the writer's own Dataset numbers it: "in the order of its __keys__ list
 * ..."; without one, "in LMDB key order" (byte order: "0", "1", "10", ...);
 * a list that does not name every sample once is not followed, and the
 * text says why. "" for other formats (their order is the file's) and for
 * a handle that did not open. Static storage of the handle, valid until it
 * is closed. */
SL_API const char *sl_dataset_sample_order(const sl_dataset *ds);
SL_API uint64_t sl_dataset_annotated_count(const sl_dataset *ds);
/* The largest stored_bytes of any sample: a buffer of this size reads any. */
SL_API uint64_t sl_dataset_max_stored_bytes(const sl_dataset *ds);

/* A dataset at a URL (docs/REMOTE.md): the state of the local cache it is
 * read through, now. dir: the folder (valid while ds is open); bytes: what
 * its objects and downloads in progress hold, of bound (io.cache_bytes);
 * objects: every object cached there (any dataset's); cached_files of
 * files: this dataset's shards cached, of its shards. */
typedef struct sl_cache_info {
  const char *dir;
  uint64_t bytes, bound, objects;
  uint64_t cached_files, files;
  uint64_t reserved[4];
} sl_cache_info;
/* Fills *out (reads the folder's listing; never fetches). Errors:
 * SL_EUNSUPPORTED (local files: no cache), SL_EIO (the folder, named),
 * SL_EINVAL (NULL out). Any thread. */
SL_API sl_status sl_dataset_cache_info(const sl_dataset *ds,
                                       sl_cache_info *out);

/* Fills *out for sample i from the index, in memory (no I/O). Errors:
 * SL_EINVAL (NULL out, i not below the count). */
SL_API sl_status sl_dataset_info(const sl_dataset *ds, uint64_t i,
                                 sl_sample_meta *out);
/* Sample i's boxes, from the index, in memory (no I/O): *boxes owned by
 * the dataset, valid until close; *n = 0 and *boxes = NULL for a sample (or
 * a file) without boxes, and for a sample verify found damaged. Errors:
 * SL_EINVAL (NULL boxes or n, i not below the count). */
SL_API sl_status sl_dataset_boxes(const sl_dataset *ds, uint64_t i,
                                  const sl_box **boxes, uint32_t *n);
/* The largest box count of any sample (0: the file has no boxes) and the
 * boxes of all samples together. */
SL_API uint32_t sl_dataset_max_boxes(const sl_dataset *ds);
SL_API uint64_t sl_dataset_box_total(const sl_dataset *ds);
/* Sample i's name: the path, relative to the packed folder, of the image
 * it was made from (what `sluice pack` records), NUL-terminated; "" when
 * the file records none. Read from the file. Errors: SL_EINVAL (i out of
 * range), SL_ETOOBIG (cap below name_bytes + 1), SL_EIO. */
SL_API sl_status sl_dataset_name(sl_dataset *ds, uint64_t i, char *buf,
                                 size_t cap);
/* Copies sample i's stored bytes (the JPEG, PNG or raw pixels) into buf and
 * sets *len. With cap below the sample's size (buf may then be NULL)
 * returns SL_ETOOBIG with *len = the size needed. Errors: SL_EINVAL (i out
 * of range, NULL len), SL_EFORMAT (a sample verify found damaged; for
 * HDF5 arrays of compressed chunks, whose samples are given as their raw
 * H·W·C pixels, also a chunk whose compressed bytes are damaged), SL_EIO
 * (a failed or short read: the file changed since open?). */
SL_API sl_status sl_dataset_read(sl_dataset *ds, uint64_t i, void *buf,
                                 size_t cap, size_t *len);
/* Decodes sample i at full size into buf as u8 pixels, row-major HWC with
 * the sample's channels (1 gray, 3 RGB), with the decoder the loader runs
 * (CMYK JPEGs become RGB; 16-bit PNG samples scale linearly to 8 bits,
 * rounded v / 257, with no gamma curve). *len gets width × height ×
 * channels; SL_ETOOBIG with that size when cap is smaller (buf may then be
 * NULL). A sample with resolution levels gives level 0's pixels, after
 * every smaller level has been decoded too (so a damaged level fails here,
 * and in `sluice verify --decode`). Errors: as sl_dataset_read, plus
 * SL_EDECODE (corrupt image: the codec's message), SL_EUNSUPPORTED,
 * SL_ENOMEM. */
SL_API sl_status sl_dataset_decode(sl_dataset *ds, uint64_t i, void *buf,
                                   size_t cap, size_t *len);

/* Sharded datasets: a folder of shards, each a sluice LMDB or HDF5 file
 * (written by sl_writer or `sluice pack`, by any number of processes or
 * machines, in any order), read as one dataset through the index file
 * "sluice.index" that sl_dataset_index writes beside them. Open the set
 * with dataset.path = the folder (or its index file); docs/SHARDS.md.
 *
 * sl_dataset_index writes dir/sluice.index listing every committed shard
 * in dir (files named *.lmdb, *.mdb, *.h5, *.hdf5 that are not hidden:
 * a writer's temporary file is, so a shard whose writer died is absent),
 * in name order, with each sample's index entry, so that opening the set
 * reads only the index. Run it again after shards are added or rewritten:
 * a shard whose size and first bytes are unchanged keeps its whole-file
 * checksum, the others are read whole once to make theirs. The shards must
 * share their class names (where two shards name a class, the same name),
 * target width and writer settings: one that differs is refused, naming it,
 * the first shard and the setting. The index is written under a temporary
 * name and renamed: a reader sees the old index or the new one.
 * report (may be NULL) gets the counts; msg (may be NULL) the message.
 * Errors: SL_EINVAL (NULL dir, no shards), SL_EFORMAT (a shard that is not
 * a sluice LMDB/HDF5 file, is damaged, or differs), SL_EIO, SL_ENOMEM.
 * Memory: 24 + 4 x target width bytes a sample and 26 a box, while it
 * runs.
 *
 * dir may instead be the URL of WebDataset or TFRecord shards (s3://,
 * http(s)://: a .tar, a brace pattern, a list file at a URL): their sidecar
 * index is then built again, each shard read once through the default cache
 * folder
 * ($XDG_CACHE_HOME/sluice, else ~/.cache/sluice), and written there;
 * index_bytes is the sidecar's size (docs/REMOTE.md). Errors then also
 * name the URL of a shard that is missing or refused. */
typedef struct sl_index_report {
  uint64_t shards, samples;
  uint64_t shard_bytes; /* the shards' bytes */
  uint64_t index_bytes; /* the index file's */
  uint64_t checksummed; /* shards read whole for their checksum */
  uint64_t reserved[3];
} sl_index_report;
SL_API sl_status sl_dataset_index(const char *dir, sl_index_report *report,
                                  char *msg, size_t msg_len);

/* 1 when the JPEG bytes[0..len) has restart markers that let the loader
 * decode only a crop's segments (the layout sl_writer and `sluice pack`
 * write; a restart interval that divides the MCU row or is whole rows, in
 * a baseline or extended sequential Huffman JPEG with one scan), 0
 * otherwise: another codec, progressive or arithmetic coding, no restart
 * markers, a malformed header. Reads only the markers before the scan.
 * A pure function: thread-safe, no memory. */
SL_API int sl_image_has_restart_layout(const void *bytes, size_t len);

/* ---- Writing datasets -------------------------------------------------------
 * An sl_writer makes a dataset file the loader and sl_dataset read:
 *
 *   sl_writer *w;
 *   sl_writer_options o = {0};
 *   o.target_width = 2;                       // two float targets a sample
 *   if (sl_writer_create(&w, "out.lmdb", &o) != SL_OK) fail(...);
 *   sl_writer_add_encoded(w, jpeg, jpeg_len, 1, (float[]){0.5f, 2.0f},
 *                         "dogs/rex.jpg");    // label 1, name
 *   sl_writer_add_pixels(w, rgb, 32, 32, 3, 0, (float[]){0, 1}, NULL);
 *   sl_writer_set_class_name(w, 0, "cat");
 *   sl_writer_set_class_name(w, 1, "dog");
 *   if (sl_writer_commit(w) != SL_OK) fail(sl_writer_errmsg(w));
 *   sl_writer_destroy(w);
 *
 * Atomic: nothing appears at the path until sl_writer_commit, which syncs
 * the file and gives it its name in one step. A writer destroyed without a
 * commit, or a process killed meanwhile (even by SIGKILL), leaves nothing
 * (LMDB; HDF5 names its file during commit only, and a later writer for the
 * same path deletes what a killed one left).
 *
 * JPEGs are rewritten losslessly into the restart layout (same DCT
 * coefficients, so the same pixels) that lets the loader decode only a
 * crop's segments, unless keep_jpeg is set; a JPEG already in that layout
 * is stored as it is.
 *
 * Memory: the LMDB writer holds one transaction (<= 32 MiB of values) and
 * 16 + 4 × target_width bytes a sample until commit; the HDF5 writer spools
 * samples to an unlinked file and holds 31 + 4 × target_width bytes a
 * sample; once a sample has boxes, either also holds 2 bytes a sample and
 * 24 a box until commit (HDF5: twice the boxes' during commit). A JPEG rewrite
 * holds the image's coefficients (~2 bytes per pixel and component) while it
 * runs.
 *
 * Thread safety: a writer is used by one thread at a time. To prepare JPEGs
 * on several threads, use an sl_transcoder per thread and add the results
 * in order from one. */
typedef struct sl_writer sl_writer;

#define SL_SETTINGS_MAX 1023

typedef struct sl_writer_options {
  const char *format;    /* "lmdb" or "hdf5"; NULL or "": from the path's
                            extension (.lmdb/.mdb, .h5/.hdf5) */
  uint32_t target_width; /* float targets per sample, 0..SL_TARGETS_MAX */
  int keep_jpeg;         /* nonzero: store JPEG bytes as given */
  int replace;           /* nonzero: commit replaces an existing file */
  const char *settings;  /* one line of at most SL_SETTINGS_MAX bytes
                            recorded in the file (shown by `sluice info`);
                            NULL: "" */
  /* Resolution levels: bit m - 1 set stores each JPEG also at m/8 of its
   * size (SL_LEVEL_SCALE(4) = 1/2; m = 1..7, at most 3 levels), made by an
   * area average of the full image and encoded at level_quality (0: 90)
   * in the restart layout; a level whose shorter side would be under 64
   * pixels is skipped. Such samples are SL_IMAGE_JPEG_LEVELS, and the
   * loader decodes each crop from the smallest level that covers it.
   * 0: none (the file is as without this option). With keep_jpeg, JPEGs
   * are stored as given (no levels made) and so are level records that
   * sl_transcoder_levels made (how `sluice pack` adds its workers'). */
  uint32_t levels;
  uint32_t level_quality;
  uint64_t reserved[3]; /* zero */
} sl_writer_options;
#define SL_LEVEL_SCALE(m) (1u << ((m)-1))

/* Starts writing path (opts NULL: every option at its zero value). On
 * failure *out is a handle holding only the message, as for
 * sl_dataset_open: read sl_writer_errmsg, then sl_writer_destroy it.
 * Errors: SL_EINVAL (unknown format, bad options), SL_EIO (cannot create
 * the temporary file), SL_ENOMEM (*out NULL when even the handle failed). */
SL_API sl_status sl_writer_create(sl_writer **out, const char *path,
                                  const sl_writer_options *opts);
/* Appends one image file's bytes as the next sample: JPEG, PNG (told by
 * their magic bytes, not by a name). The header is read for the size and
 * channels (gray stays 1, everything else is 3); JPEGs are rewritten (see
 * above). label: a class index (>= 0) or -1; targets: target_width floats,
 * each finite (NULL only when the width is 0); name: the sample's name
 * (NULL or "": none; any bytes but NUL, at most SL_SAMPLE_NAME_MAX).
 * Errors: SL_EINVAL (NULL bytes, bad label, targets or name), SL_EDECODE
 * (not a JPEG or PNG, or a corrupt one), SL_EUNSUPPORTED, SL_ETOOBIG (over
 * 65535 pixels a side, or a JPEG to rewrite of over 2^28 pixels); nothing
 * is added then and the writer stays usable. SL_EIO, SL_ENOMEM: the file
 * may hold part of the sample, so the writer takes nothing more and commit
 * fails (SL_ESTATE), leaving nothing at the path. SL_ESTATE after commit. */
SL_API sl_status sl_writer_add_encoded(sl_writer *w, const void *bytes,
                                       size_t len, int32_t label,
                                       const float *targets, const char *name);
/* As sl_writer_add_encoded, with nboxes (0..SL_BOXES_MAX) boxes (NULL
 * when 0) in the image's pixel coordinates as stored (before any EXIF
 * rotation: sluice stores pixels as the file holds them). Each box must
 * have finite coordinates with x0 <= x1 and y0 <= y1, a label >= 0 (it
 * counts towards the class count as a sample's label does) and only
 * SL_BOX_* flags; otherwise SL_EINVAL naming the sample and the box, and
 * nothing is added. A file with at least one box gets the boxes layout
 * (docs/FORMATS.md); one without stays readable by older sluice.
 * Memory: the writer holds 2 bytes a sample and 24 a box until commit once
 * any sample has boxes. */
SL_API sl_status sl_writer_add_annotated(sl_writer *w, const void *bytes,
                                         size_t len, int32_t label,
                                         const float *targets, const char *name,
                                         const sl_box *boxes, uint32_t nboxes);
/* Appends u8 HWC pixels (channels 1 or 3) as a raw sample, stored as they
 * are. Errors as above, plus SL_EINVAL for a zero or over-65535 side. */
SL_API sl_status sl_writer_add_pixels(sl_writer *w, const void *pixels,
                                      uint32_t width, uint32_t height,
                                      uint32_t channels, int32_t label,
                                      const float *targets, const char *name);
/* Names class label (at most SL_CLASS_NAME_MAX bytes, no line break). The
 * file's class count is one more than the largest label added or named;
 * a class left unnamed is called by its number ("7"). */
SL_API sl_status sl_writer_set_class_name(sl_writer *w, uint32_t label,
                                          const char *name);
/* Writes the metadata, syncs the file and gives it its name. Errors:
 * SL_EIO (with replace unset: the path exists; disk full...); on failure
 * nothing is left at the path and the writer can only be destroyed. */
SL_API sl_status sl_writer_commit(sl_writer *w);
/* Frees w; without a commit, deletes everything written. Accepts NULL. */
SL_API void sl_writer_destroy(sl_writer *w);
/* Samples added so far. */
SL_API uint64_t sl_writer_count(const sl_writer *w);
/* The latest failure's message ("" if none); valid until the next call. */
SL_API const char *sl_writer_errmsg(const sl_writer *w);

/* A transcoder turns a JPEG into the bytes an sl_writer stores for it (the
 * lossless restart-layout rewrite, checked with the loader's decoder), so
 * that the expensive part of packing can run on many threads: a JPEG it
 * made is stored as it is by sl_writer_add_encoded. One per thread; memory:
 * the image's coefficients while a call runs, freed before it returns. */
typedef struct sl_transcoder sl_transcoder;
/* Errors: SL_ENOMEM (*out NULL). */
SL_API sl_status sl_transcoder_create(sl_transcoder **out);
SL_API void sl_transcoder_destroy(sl_transcoder *t);
/* Rewrites the JPEG in[0..len) into *out (malloc'd: free with free(),
 * *out_len bytes). Errors: SL_EDECODE (corrupt: libjpeg's warnings are
 * errors), SL_EUNSUPPORTED (lossless or 12-bit JPEGs...), SL_ETOOBIG,
 * SL_ENOMEM; sl_transcoder_errmsg says which and why. */
SL_API sl_status sl_transcoder_jpeg(sl_transcoder *t, const void *in,
                                    size_t len, uint8_t **out, size_t *out_len);
SL_API const char *sl_transcoder_errmsg(const sl_transcoder *t);
/* Makes the level record of a JPEG (sl_writer_options.levels: scales,
 * quality 1..100): the JPEG put into the restart layout as
 * sl_transcoder_jpeg does (level 0), then its smaller levels. *out
 * (malloc'd, free with free()) is what sl_writer_add_encoded stores as it
 * is in a writer with levels; when no level fits (a small image, CMYK) it
 * is the plain restart-layout JPEG. Errors: as sl_transcoder_jpeg, plus
 * SL_EINVAL (bad scales or quality). */
SL_API sl_status sl_transcoder_levels(sl_transcoder *t, const void *in,
                                      size_t len, uint32_t scales, int quality,
                                      uint8_t **out, size_t *out_len);

/* The restart interval, in MCUs, of the restart layout for a JPEG width
 * pixels wide with `components` components whose largest horizontal
 * sampling factor is max_h_samp (1 for 4:4:4, 2 for 4:2:0). An encoder that
 * writes this interval (libjpeg's restart_interval) as a sequential Huffman
 * JPEG makes files that sl_writer stores as they are and the loader decodes
 * by segments. Thread-safe. */
SL_API int sl_restart_layout_interval(int width, int components,
                                      int max_h_samp);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_H */

/* ---- Experimental: memory planning
 * ------------------------------------------- For `sluice schedule` and tools
 * like it; may change between releases (define SLUICE_EXPERIMENTAL before
 * including this header to use it, as zstd's ZSTD_STATIC_LINKING_ONLY does). */
#if defined(SLUICE_EXPERIMENTAL) && !defined(SLUICE_H_EXPERIMENTAL)
#define SLUICE_H_EXPERIMENTAL
#ifdef __cplusplus
extern "C" {
#endif

/* What sl_loader_open would allocate for a config, computed from the config
 * alone (as the loader computes it at open). */
typedef struct sl_memory_plan {
  uint32_t max_res;  /* the schedule's largest resolution */
  uint32_t channels; /* assumed per sample (3) */
  uint32_t nstaging, nslots, workers;
  uint64_t staging_bytes; /* one staging buffer at max_res */
  uint64_t slot_bytes;    /* one batch at max_res, in the batch dtype */
  uint64_t host_bytes;    /* staging, host slots, labels, indices, targets */
  uint64_t device_bytes;  /* device slots (cuda), within vram_budget */
  /* device_bytes as the CUDA allocator maps it, in 2 MiB pages: what counts
   * against vram_budget. The CUDA context (driver-dependent, hundreds of
   * MiB) comes on top when the loader's process has none on that device
   * yet; it is not counted in the budget. */
  uint64_t device_alloc_bytes;
  uint64_t reserved[3];
} sl_memory_plan;

/* Fills *out for cfg as the host backend (cuda = 0) or the CUDA backend
 * would hold it, with target_width float targets per sample. Errors:
 * SL_ECONFIG (inconsistent options, the device slots exceed
 * device.vram_budget, or the host buffers exceed the memory available,
 * MemAvailable or the memory cgroup's limit, as sl_loader_open refuses
 * them: sl_config_errmsg says which, with the bytes), SL_ETOOBIG (a buffer
 * size overflows), SL_EINVAL (target_width over SL_TARGETS_MAX). */
SL_API sl_status sl_config_memory_plan(sl_config *cfg, int cuda,
                                       uint32_t target_width,
                                       sl_memory_plan *out);
/* The resolution of an epoch under cfg's schedule, and the bytes of one
 * batch at a resolution in cfg's dtype (3 channels). */
SL_API uint32_t sl_config_epoch_resolution(const sl_config *cfg,
                                           uint64_t epoch);
SL_API uint64_t sl_config_batch_bytes(const sl_config *cfg, uint32_t res);
/* The batches each rank gets per epoch under cfg (batch size, sharding,
 * drop_last; eval never drops) from a dataset of count samples, as
 * sl_loader_batches_per_epoch of a loader opened on it would say: for a
 * tool that runs the loader with other settings (`sluice preview`) to
 * refuse what the loader would refuse. Errors: SL_ECONFIG with the
 * loader's message (no whole batch with drop_last, no samples, or what
 * sl_config_validate finds), SL_EINVAL for NULL arguments. */
SL_API sl_status sl_config_batches_per_epoch(sl_config *cfg, uint64_t count,
                                             uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_EXPERIMENTAL */
