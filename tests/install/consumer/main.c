/* An outside program: uses only the installed <sluice.h> and library. */
#include <sluice.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  if (sl_version_number() != SLUICE_VERSION_NUMBER) {
    fprintf(stderr, "header/library version mismatch\n");
    return 1;
  }
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  int rc = 0;
  if (sl_config_set(cfg, "loader.batch_size", "32") != SL_OK)
    rc = 1;
  if (sl_config_set(cfg, "loader.batchsize", "32") != SL_ECONFIG ||
      !strstr(sl_config_errmsg(cfg), "did you mean loader.batch_size"))
    rc = 1;
  printf("sluice %s: %s\n", sl_version_string(), rc ? "FAIL" : "ok");
  sl_config_destroy(cfg);
  return rc;
}
