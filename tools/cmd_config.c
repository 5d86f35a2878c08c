/* sluice config --list | --check FILE | --show [FILE]  */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SLUICE_EXPERIMENTAL /* sl_config_memory_plan */
#include "common/url_shown.h"
#include "sluice.h"
#include "tools/cli.h"

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

/* Opens dataset.path as the loader would (the index only). config_ok:
 * the file itself had no error (else only a failure is told). */
static int check_one(const sl_config *cfg, const char *file, int config_ok,
                     const char *path, const char *key) {
  sl_dataset *ds;
  if (sl_dataset_open(&ds, cfg) != SL_OK) {
    fprintf(stderr, "sluice config: %s: %s: %s\n", file, key,
            sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return 1;
  }
  char shown[4096]; /* no URL's credentials */
  if (config_ok)
    printf("%s: ok (dataset %s: %llu samples, %u classes)\n", file,
           sl_url_shown(path, shown, sizeof shown),
           (unsigned long long)sl_dataset_count(ds),
           (unsigned)sl_dataset_class_count(ds));
  sl_dataset_close(ds);
  return 0;
}

/* dataset.mix: each of its datasets opened as dataset.path (cfg is
 * changed: the mix's keys cleared, dataset.path set to each in turn). */
static int check_mix(sl_config *cfg, const char *file, int config_ok,
                     char *mix) {
  if (sl_config_set(cfg, "dataset.mix", "") != SL_OK ||
      sl_config_set(cfg, "dataset.weights", "") != SL_OK)
    return 1;
  int rc = 0;
  char *save = NULL;
  for (char *item = strtok_r(mix, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    while (*item == ' ' || *item == '\t')
      item++;
    size_t n = strlen(item);
    while (n > 0 && (item[n - 1] == ' ' || item[n - 1] == '\t'))
      item[--n] = '\0';
    if (sl_config_set(cfg, "dataset.path", item) != SL_OK) {
      fprintf(stderr, "sluice config: %s: dataset.mix: %s\n", file,
              sl_config_errmsg(cfg));
      rc = 1;
    } else if (check_one(cfg, file, config_ok, item, "dataset.mix") != 0) {
      rc = 1;
    }
  }
  return rc;
}

/* The config's dataset, or each of dataset.mix's, opened. */
static int check_dataset(sl_config *cfg, const char *file, int config_ok) {
  char path[4096], mix[8192];
  if (sl_config_get(cfg, "dataset.path", path, sizeof path) != SL_OK)
    return 1;
  if (!path[0] && sl_config_get(cfg, "dataset.mix", mix, sizeof mix) == SL_OK &&
      mix[0])
    return check_mix(cfg, file, config_ok, mix);
  if (!path[0]) {
    if (config_ok)
      printf("%s: ok (no dataset.path to open)\n", file);
    return 0;
  }
  return check_one(cfg, file, config_ok, path, "dataset.path");
}

/* --check: every error of the file in one run: each bad line and failed
 * relation (sl_config_check_ini applies the good lines regardless), then
 * the dataset the good lines name. */
static int check(sl_config *cfg, const char *file, int open_data) {
  sl_status st = sl_config_check_ini(cfg, file);
  if (st != SL_OK)
    fprintf(stderr, "sluice config: %s\n", sl_config_errmsg(cfg));
  if (st == SL_EIO)
    return 1;
  int rc = st == SL_OK ? 0 : 1;
  /* The memory the schedule needs, once the relations it is computed
   * from hold: the host backend's (auto falls back to it), which keeps
   * the most in host memory. */
  if (sl_config_validate(cfg) == SL_OK) {
    char backend[16];
    sl_memory_plan plan;
    int cuda = sl_config_get(cfg, "device.backend", backend, sizeof backend) ==
                   SL_OK &&
               strcmp(backend, "cuda") == 0;
    if (sl_config_memory_plan(cfg, cuda, 0, &plan) != SL_OK) {
      fprintf(stderr, "sluice config: %s: %s\n", file, sl_config_errmsg(cfg));
      rc = 1;
    }
  }
  if (open_data)
    rc |= check_dataset(cfg, file, rc == 0);
  else if (rc == 0)
    printf("%s: ok\n", file);
  return rc;
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
  bool list = false, check_file = false, show_file = false, no_open = false;
  const char *file = NULL;
  const sl_cli_opt opts[] = {
      {.name = "--list",
       .kind = SL_CLI_FLAG,
       .help = "every option with its type, default, allowed values and help",
       .dst = &list},
      {.name = "--check",
       .kind = SL_CLI_FLAG,
       .help = "validate FILE; exit 1 with file:line and the reason for each "
               "bad line\nand each failed relation between options, all in "
               "one run; then open\nits dataset.path, if set (not with "
               "--no-open), so a missing or\ndamaged dataset shows before a "
               "job starts",
       .dst = &check_file},
      {.name = "--no-open",
       .kind = SL_CLI_FLAG,
       .help = "with --check: do not open the dataset",
       .dst = &no_open},
      {.name = "--show",
       .kind = SL_CLI_FLAG,
       .help = "print every option's value after applying FILE",
       .dst = &show_file},
  };
  const sl_cli_spec spec = {.cmd = "config",
                            .head = "usage: sluice config --list\n"
                                    "       sluice config --check FILE "
                                    "[--no-open]\n"
                                    "       sluice config --show [FILE]\n\n",
                            .column = 10,
                            .opts = opts,
                            .nopts = sizeof opts / sizeof opts[0],
                            .pos = &file,
                            .max_pos = 1,
                            .too_many = "one FILE only"};
  if (argc < 2) {
    sl_cli_usage(&spec, stderr);
    return 2;
  }
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc >= 0)
    return rc;
  if (list + check_file + show_file != 1)
    return sl_cli_usage_error("config", "one of --list, --check FILE or "
                                        "--show [FILE] (try --help)");
  if (no_open && !check_file)
    return sl_cli_usage_error("config", "--no-open goes with --check");
  if (list)
    return file ? sl_cli_usage_error("config", "--list takes no FILE")
                : list_options();
  if (check_file && !file)
    return sl_cli_usage_error("config", "--check needs exactly one FILE (and "
                                        "may take --no-open)");
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  if (check_file) {
    rc = check(cfg, file, !no_open);
  } else {
    rc = file ? load(cfg, file) : 0;
    if (rc == 0)
      rc = show(cfg);
  }
  sl_config_destroy(cfg);
  return rc;
}
