/* sluice config --list | --check FILE | --show [FILE]  */
#include <stdio.h>
#include <string.h>

#include "sluice.h"
#include "tools/cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: sluice config --list\n"
             "       sluice config --check FILE\n"
             "       sluice config --show [FILE]\n\n"
             "--list   every option with its type, default, allowed values "
             "and help\n"
             "--check  validate FILE; exit 1 with file:line and the reason "
             "for each bad line\n"
             "--show   print every option's value after applying FILE\n");
}

static int list_options(void) {
  const char *section = "";
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    if (sl_option_info_get(i, &info) != SL_OK)
      return 1;
    size_t sec_len = strcspn(info.key, ".");
    if (strncmp(section, info.key, sec_len) != 0 || section[sec_len] != '.') {
      printf("%s[%.*s]\n", i ? "\n" : "", (int)sec_len, info.key);
      section = info.key;
    }
    printf("%-24s %-7s default '%s'  (%s)\n    %s\n", info.key, info.type,
           info.default_value, info.allowed, info.help);
  }
  return 0;
}

static int load(sl_config *cfg, const char *path) {
  if (sl_config_load_ini(cfg, path) != SL_OK) {
    fprintf(stderr, "sluice config: %s\n", sl_config_errmsg(cfg));
    return 1;
  }
  return 0;
}

static int show(sl_config *cfg) {
  char buf[1024];
  for (size_t i = 0; i < sl_option_count(); i++) {
    sl_option_info info;
    sl_option_info_get(i, &info);
    if (sl_config_get(cfg, info.key, buf, sizeof buf) != SL_OK)
      return 1;
    printf("%s = %s\n", info.key, buf);
  }
  return 0;
}

int sl_cmd_config(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *op = argv[1];
  if (strcmp(op, "--help") == 0 || strcmp(op, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(op, "--list") == 0)
    return argc == 2 ? list_options()
                     : sl_cli_usage_error("config", "--list takes no FILE");
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  int rc;
  if (strcmp(op, "--check") == 0) {
    if (argc != 3) {
      sl_config_destroy(cfg);
      return sl_cli_usage_error("config", "--check needs exactly one FILE");
    }
    rc = load(cfg, argv[2]);
    if (rc == 0)
      printf("%s: ok\n", argv[2]);
  } else if (strcmp(op, "--show") == 0 && argc <= 3) {
    rc = argc == 3 ? load(cfg, argv[2]) : 0;
    if (rc == 0)
      rc = show(cfg);
  } else {
    rc = sl_cli_usage_error("config", "unknown option '%s' (try --help)", op);
  }
  sl_config_destroy(cfg);
  return rc;
}
