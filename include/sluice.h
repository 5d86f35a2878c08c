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
SL_API sl_status sl_config_get(const sl_config *cfg, const char *key,
                               char *buf, size_t len);

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

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_H */
