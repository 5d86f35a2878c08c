/* libFuzzer target: the image list parser (formats/files/image_list.c) an image
 * folder's list file goes through at open: PATH LABEL lines and im2rec's
 * INDEX<TAB>LABEL...<TAB>PATH. Seeds in fuzz/corpus_image_list: a
 * torchvision-style list and .lst files as im2rec's write_list writes
 * them.
 *
 * The input is a list: each line parsed in turn, the form fixed by the
 * first image line as the reader does; a parsed line's path must lie
 * inside that line and be non-empty, its label -1 or more, its targets
 * within the cap; a reason is a NUL-terminated, non-empty string. Build
 * and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/files/image_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { CAP = 8 };
  float t[CAP];
  char why[160];
  sl_list_form form = SL_LIST_ANY;
  const char *s = (const char *)data;
  size_t at = 0;
  while (at < size) {
    const char *nl = memchr(s + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - (s + at)) : size - at;
    /* the line alone on the heap: ASan sees a read past its end */
    char *line = malloc(len ? len : 1);
    if (!line)
      return 0;
    memcpy(line, s + at, len);
    sl_list_line l;
    const char *bad =
        sl_list_parse_line(line, len, &form, &l, t, CAP, why, sizeof why);
    if (bad) {
      if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
        abort();
    } else if (l.path_len) {
      if (l.path < line || l.path + l.path_len > line + len || l.label < -1 ||
          l.ntargets > CAP || l.ntargets == 1)
        abort();
    }
    free(line);
    at += len + 1;
  }
  return 0;
}
