/* libFuzzer target: the tf.train.Example parser (formats/records/tf_example.c)
 * and the image header sniffer the TFRecord reader runs on every record at open
 * (formats/core/image_sniff.c). Seeds in fuzz/corpus_example: Examples the
 * `tfrecord` package wrote (TF's ImageNet converter's features, TFDS's),
 * packed and unpacked lists, merged and repeated entries.
 *
 * Every input must parse or be rejected with a reason; a found BytesList's
 * first value must lie inside the input, and a list's count cannot exceed
 * what the input's bytes can hold. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/core/image_sniff.h"
#include "formats/records/tf_example.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const keys[] = {
      "image/encoded", "image/class/label", "image", "label", "",
      "image/filename"};
  enum { NK = sizeof keys / sizeof keys[0] };
  sl_feature f[NK];
  char why[256];
  if (sl_example_parse(data, size, keys, NK, f, why, sizeof why) != 0) {
    if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
      abort(); /* a rejection always says why */
    return 0;
  }
  for (int k = 0; k < NK; k++) {
    if (f[k].kind == SL_FEATURE_NONE && f[k].count != 0)
      abort();
    if (f[k].count > size)
      abort(); /* every value takes at least one byte */
    if (f[k].kind == SL_FEATURE_BYTES && f[k].count > 0) {
      if (f[k].first_off > size || f[k].first_len > size - f[k].first_off)
        abort();
      sl_sniff s;
      (void)sl_sniff_image(data + f[k].first_off, f[k].first_len, &s);
    }
  }
  return 0;
}
