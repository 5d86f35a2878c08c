/* Internal error reporting: a status plus a message saying what and where.
 *
 * Every object keeps one sl_err as its "last error"; internal functions take
 * an sl_err * as their last parameter and fill it on failure:
 *
 *     if (len > max)
 *       return sl_err_set(err, SL_EFORMAT, "%s: sample %zu: length %zu > %zu",
 *                         path, i, len, max);
 *
 * sl_err_set returns the code so a failure is one line. err may be NULL. */
#ifndef SLUICE_COMMON_ERROR_H
#define SLUICE_COMMON_ERROR_H

#include "sluice.h"

#define SL_ERRMSG_MAX 512

typedef struct sl_err {
  sl_status code;
  char msg[SL_ERRMSG_MAX];
} sl_err;

#if defined(__GNUC__)
#define SL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SL_PRINTF(f, a)
#endif

/* Records code and a printf-style message in err; returns code. */
sl_status sl_err_set(sl_err *err, sl_status code, const char *fmt, ...)
    SL_PRINTF(3, 4);
/* As sl_err_set, appending ": strerror(errnum)". */
sl_status sl_err_errno(sl_err *err, sl_status code, int errnum, const char *fmt,
                       ...) SL_PRINTF(4, 5);
/* Prefixes the existing message with more context ("file.lmdb: " + msg). */
sl_status sl_err_prefix(sl_err *err, const char *fmt, ...) SL_PRINTF(2, 3);
/* Clears err to SL_OK and an empty message. */
void sl_err_clear(sl_err *err);

#endif
