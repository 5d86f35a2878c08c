#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/safe_text.h"
#include "common/url_shown.h"

/* A message holds names taken from files (a tar member's, a key, a list's
 * path): its control characters are escaped once it is made, so no
 * message the library gives out can forge a line or drive a terminal. It
 * may hold a dataset's URL: no credential of one is left in it
 * (common/url_shown.h). */
static void make_safe(sl_err *err) {
  char raw[SL_ERRMSG_MAX];
  sl_text_hide_credentials(err->msg);
  size_t n = strnlen(err->msg, sizeof err->msg - 1);
  if (sl_text_printable((const uint8_t *)err->msg, n))
    return;
  memcpy(raw, err->msg, n);
  sl_safe_text(err->msg, sizeof err->msg, raw, n);
}

sl_status sl_err_set(sl_err *err, sl_status code, const char *fmt, ...) {
  if (!err)
    return code;
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  make_safe(err);
  return code;
}

sl_status sl_err_errno(sl_err *err, sl_status code, int errnum, const char *fmt,
                       ...) {
  if (!err)
    return code;
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof err->msg) {
    char buf[128];
    /* GNU strerror_r may return a static string instead of filling buf. */
    const char *s = strerror_r(errnum, buf, sizeof buf);
    snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", s);
  }
  make_safe(err);
  return code;
}

sl_status sl_err_prefix(sl_err *err, const char *fmt, ...) {
  if (!err)
    return SL_OK;
  char head[SL_ERRMSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  size_t hl = strlen(head);
  size_t tl = strnlen(err->msg, sizeof err->msg - 1);
  if (hl + tl > sizeof err->msg - 1)
    tl = sizeof err->msg - 1 - hl;
  memmove(err->msg + hl, err->msg, tl);
  memcpy(err->msg, head, hl);
  err->msg[hl + tl] = '\0';
  make_safe(err);
  return err->code;
}

void sl_err_clear(sl_err *err) {
  if (!err)
    return;
  err->code = SL_OK;
  err->msg[0] = '\0';
}
