/* libFuzzer target: the INI config parser (loader/config.c over inih) and
 * every option's value parser (sizes, numbers, enums, lists), then the
 * cross-field check. Seeds in fuzz/corpus_config. Every input must load or
 * be rejected with a message. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sluice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  sl_config *cfg = NULL;
  if (sl_config_create(&cfg) == SL_OK) {
    sl_status st = sl_config_load_ini_string(cfg, text, "fuzz.ini");
    const char *msg = sl_config_errmsg(cfg);
    if (st != SL_OK && (!msg || !msg[0]))
      abort(); /* a rejection always says why */
    if (st == SL_OK && sl_config_validate(cfg) != SL_OK &&
        !sl_config_errmsg(cfg)[0])
      abort();
    sl_config_destroy(cfg);
  }
  free(text);
  return 0;
}
