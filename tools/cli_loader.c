/* See cli.h: the loader of a config file, for the subcommands that run one
 * (preview, bench). */
#include <stdio.h>

#include "sluice.h"
#include "tools/cli.h"

sl_loader *sl_cli_open_loader(const char *cmd, const char *path,
                              const char *const *kv) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice %s: out of memory\n", cmd);
    return NULL;
  }
  sl_loader *ld = NULL;
  sl_status st = sl_config_load_ini(cfg, path);
  for (int i = 0; st == SL_OK && kv && kv[i]; i += 2)
    st = sl_config_set(cfg, kv[i], kv[i + 1]);
  if (st != SL_OK)
    fprintf(stderr, "sluice %s: %s\n", cmd, sl_config_errmsg(cfg));
  else if ((st = sl_loader_open(&ld, cfg)) != SL_OK) {
    fprintf(stderr, "sluice %s: %s\n", cmd, sl_loader_errmsg(ld));
    sl_loader_close(ld);
    ld = NULL;
  }
  sl_config_destroy(cfg);
  return ld;
}
