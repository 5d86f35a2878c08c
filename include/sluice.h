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
 *   - The library keeps no global mutable state, never prints and never
 *     exits; messages reach the caller through statuses and, for long-running
 *     objects, an optional log callback.
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
 * "section.key". Errors name the file, line, key, value and what is allowed;
 * an unknown key suggests the nearest known one; a key given twice in the
 * file is an error. On error the config is unchanged: a file applies whole or
 * not at all. Returns SL_EIO when the file cannot be read, SL_ECONFIG for
 * bad contents. Cross-field checks run too (see sl_config_validate). */
SL_API sl_status sl_config_load_ini(sl_config *cfg, const char *path);
/* As sl_config_load_ini, on text in memory; name is used in messages
 * ("<string>" when NULL). */
SL_API sl_status sl_config_load_ini_string(sl_config *cfg, const char *text,
                                           const char *name);

/* Sets one option from its text form, with the same parser as the INI file:
 * sl_config_set(cfg, "device.vram_budget", "1GiB"). Returns SL_ECONFIG for an
 * unknown key (with a suggestion) or a bad value; the option is then
 * unchanged. Cross-field consistency is checked by sl_config_validate. */
SL_API sl_status sl_config_set(sl_config *cfg, const char *key,
                               const char *value);

/* Writes the option's current value in canonical text form (sizes in bytes
 * with a unit, lists comma-separated) to buf, always NUL-terminated. Returns
 * SL_ECONFIG for an unknown key, SL_ETOOBIG if len is too small. */
SL_API sl_status sl_config_get(const sl_config *cfg, const char *key, char *buf,
                               size_t len);

/* Checks relations between options (resolution.min <= resolution.max,
 * loader.rank < loader.world_size, list lengths...). Returns SL_ECONFIG with
 * a message naming the keys. sl_loader_open calls it too. */
SL_API sl_status sl_config_validate(sl_config *cfg);

/* Installs a log callback used by loaders opened from this config. */
SL_API void sl_config_set_log(sl_config *cfg, sl_log_fn fn, void *user);

/* The message of the last failing call on cfg; "" if none. Valid until the
 * next call on cfg. */
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
 *   if (sl_loader_open(&ld, cfg) != SL_OK) fail(sl_config_errmsg(cfg));
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
 * Sharding: each rank reads a disjoint part of every epoch; all ranks get
 * the same number of batches: with loader.drop_last, floor(N / (world *
 * batch)) each; without it ceil(N / (world * batch)), the last batches
 * padded by repeating samples from the start of the epoch's order.
 *
 * Memory, all allocated and touched in sl_loader_open and never grown,
 * with B = batch_size bytes at the schedule's LARGEST resolution
 * (batch_size × res × res × channels × element size):
 *   staging   device.staging × B  (host memory; pinned with CUDA)
 *   slots     device.prefetch × B (host memory with the host backend;
 *             device memory, at most device.vram_budget, with CUDA)
 *   order     8 bytes per sample (+ 8 per quasi block), index 24 bytes per
 *             sample (formats/), per-worker decode scratch for a few crops
 *             of the largest resolution, 12 bytes per sample of each
 *             staging buffer and slot for labels and indices.
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
  uint32_t n;              /* samples: always loader.batch_size */
  uint32_t height, width;  /* this epoch's resolution */
  uint32_t channels;       /* 3 (RGB) or 1 */
  sl_dtype dtype;
  sl_layout layout;
  int on_device;  /* nonzero: data is device memory */
  void *ready;    /* with CUDA: a cudaEvent_t * to wait on (e.g.
                     cudaStreamWaitEvent) before reading data;
                     NULL when data is ready on return */
  size_t bytes;   /* bytes of data */
  uint64_t epoch; /* epoch of the batch */
  uint64_t index; /* batch index within the epoch */
  uint64_t slot;  /* opaque: identifies the slot to release */
} sl_batch;

/* Opens a loader on the config's dataset: validates cfg (sl_config_validate),
 * opens and indexes the dataset, allocates every buffer (see Memory above)
 * and starts the threads. The config may be destroyed afterwards. On error
 * *out is NULL and sl_config_errmsg(cfg) says what failed: SL_ECONFIG,
 * SL_EIO/SL_EFORMAT (dataset), SL_ENOMEM, SL_ETHREAD, SL_ENODEV
 * (device.backend = cuda without a usable GPU). */
SL_API sl_status sl_loader_open(sl_loader **out, sl_config *cfg);
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
/* Gives the batch's slot back. stream: the cudaStream_t the batch was used
 * on (the slot is rewritten only after the work queued on it completes), or
 * NULL when the caller has finished with the data. Returns SL_EINVAL for a
 * batch already released or not from this loader. */
SL_API sl_status sl_batch_release(sl_loader *ld, sl_batch *batch, void *stream);

/* Batches each epoch gives this rank (the same for every epoch and rank). */
SL_API uint64_t sl_loader_batches_per_epoch(const sl_loader *ld);
/* Samples in the dataset. */
SL_API uint64_t sl_loader_sample_count(const sl_loader *ld);
/* The resolution (square side) of an epoch under the loader's schedule. */
SL_API uint32_t sl_loader_epoch_resolution(const sl_loader *ld, uint64_t epoch);

/* Resume. The state is (epoch, batches handed out in it) plus a check of the
 * settings that decide the order (seed, rank, world size, batch size, order,
 * drop_last, sample count), in a versioned blob of SL_LOADER_STATE_BYTES.
 * save: writes it to buf (*len = capacity in, bytes written out); with a
 * NULL buf or a small *len, sets *len and returns SL_ETOOBIG. SL_ESTATE
 * before the first start_epoch. restore: on a loader opened with the same
 * settings (else SL_ESTATE naming the setting that differs; SL_EINVAL for a
 * damaged blob or an unknown version), starts the saved epoch at the saved
 * batch: the following next calls return exactly the batches an
 * uninterrupted run would have returned. */
#define SL_LOADER_STATE_BYTES 96
SL_API sl_status sl_loader_save_state(sl_loader *ld, void *buf, size_t *len);
SL_API sl_status sl_loader_restore_state(sl_loader *ld, const void *buf,
                                         size_t len);

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
} sl_loader_stats;
SL_API sl_status sl_loader_stats_get(sl_loader *ld, sl_loader_stats *out);

/* The message of the last failing call on ld; "" if none. Valid until the
 * next call on ld. */
SL_API const char *sl_loader_errmsg(const sl_loader *ld);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_H */
