/* See codecs/jpeg_strict.h. */
#include "codecs/jpeg_strict.h"

#include <jerror.h>

void sl_jpeg_emit_strict(j_common_ptr c, int level) {
  if (level < 0 && c->err->msg_code != JWRN_JFIF_MAJOR)
    c->err->error_exit(c);
}

void sl_jpeg_output_silent(j_common_ptr c) {
  (void)c;
}
