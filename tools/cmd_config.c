/* sluice config --list | --check FILE | --show [FILE]  */
#include <stdio.h>
#include <string.h>

#include "sluice.h"
#include "tools/cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: sluice config --list\n"
             "       sluice config --check FILE [--no-open]\n"
             "       sluice config --show [FILE]\n\n"
             "--list   every option with its type, default, allowed values "
             "and help\n"
             "--check  validate FILE; exit 1 with file:line and the reason "
             "for each bad line;\n"
             "         then open its dataset.path, if set (not with "
             "--no-open), so a\n"
             "         missing or damaged dataset shows before a job starts\n"
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

/* Opens the config's dataset as the loader would (the index only). */
static int check_dataset(const sl_config *cfg, const char *file) {
  char path[4096];
  if (sl_config_get(cfg, "dataset.path", path, sizeof path) != SL_OK)
    return 1;
  if (!path[0]) {
    printf("%s: ok (no dataset.path to open)\n", file);
    return 0;
  }
  sl_dataset *ds;
  if (sl_dataset_open(&ds, cfg) != SL_OK) {
    fprintf(stderr, "sluice config: %s: dataset.path: %s\n", file,
            sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return 1;
  }
  printf("%s: ok (dataset %s: %llu samples, %u classes)\n", file, path,
         (unsigned long long)sl_dataset_count(ds),
         (unsigned)sl_dataset_class_count(ds));
  sl_dataset_close(ds);
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
    const char *file = NULL;
    int open_data = 1, bad = 0;
    for (int i = 2; i < argc; i++) {
      if (strcmp(argv[i], "--no-open") == 0)
        open_data = 0;
      else if (argv[i][0] == '-' || file)
        bad = 1;
      else
        file = argv[i];
    }
    if (bad || !file) {
      sl_config_destroy(cfg);
      return sl_cli_usage_error("config",
                                "--check needs exactly one FILE (and may take "
                                "--no-open)");
    }
    rc = load(cfg, file);
    if (rc == 0 && open_data)
      rc = check_dataset(cfg, file);
    else if (rc == 0)
      printf("%s: ok\n", file);
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
