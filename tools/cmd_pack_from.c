/* sluice pack --from FILE OUT: any dataset sluice reads (its own, a Caffe
 * Datum or image-value LMDB) rewritten in sluice's layout, for the fastest
 * open and crops: labels, class names, targets and sample names kept.
 * JPEG and PNG samples go to the writer as files (JPEGs rewritten
 * losslessly into the restart layout unless --keep-jpeg); raw arrays (HWC
 * or Caffe's CHW planes) and WebP are decoded and stored as raw RGB/gray
 * pixels. Through the public API only (sl_dataset_*, sl_writer_*). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice.h"
#include "tools/cli.h"
#include "tools/pack/pack_copy.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: sluice pack --from FILE OUT [--set KEY=VALUE]... "
          "[--keep-jpeg] [--force]\n\n"
          "Rewrites the dataset FILE (sluice's own, a Caffe Datum LMDB or an "
          "LMDB\nof image files) as OUT in sluice's layout (format from OUT's "
          "extension),\nkeeping labels, class names, targets and sample "
          "names. JPEG/PNG samples\nare stored as files (JPEGs rewritten "
          "losslessly into the restart layout);\nraw arrays and WebP as raw "
          "pixels.\n"
          "  --set KEY=VALUE  a dataset.* option for reading FILE, e.g.\n"
          "                   dataset.label_file=labels.txt, "
          "dataset.channel_order=rgb,\n"
          "                   dataset.lmdb_db=train (repeatable)\n"
          "  --keep-jpeg      store JPEGs byte for byte\n"
          "  --force          replace OUT if it exists\n");
}

static int fail_ds(sl_dataset *ds) {
  fprintf(stderr, "sluice pack: %s\n", sl_dataset_errmsg(ds));
  return 1;
}

static int fail_w(sl_writer *w) {
  fprintf(stderr, "sluice pack: %s\n", sl_writer_errmsg(w));
  return 1;
}

int sl_cmd_pack_from(int argc, char **argv) {
  const char *from = NULL, *out = NULL;
  bool keep = false, force = false;
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice pack: out of memory\n");
    return 1;
  }
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      sl_config_destroy(cfg);
      return 0;
    } else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
      from = argv[++i];
    } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
      char kv[1024];
      snprintf(kv, sizeof kv, "%s", argv[++i]);
      char *eq = strchr(kv, '=');
      if (!eq || strncmp(kv, "dataset.", 8) != 0)
        rc = sl_cli_usage_error("pack",
                                "--set wants dataset.KEY=VALUE, not "
                                "'%s'",
                                argv[i]);
      else {
        *eq = '\0';
        if (sl_config_set(cfg, kv, eq + 1) != SL_OK)
          rc = sl_cli_usage_error("pack", "%s", sl_config_errmsg(cfg));
      }
    } else if (!strcmp(argv[i], "--keep-jpeg")) {
      keep = true;
    } else if (!strcmp(argv[i], "--force")) {
      force = true;
    } else if (argv[i][0] == '-') {
      rc = sl_cli_usage_error("pack",
                              "unknown or incomplete option '%s' "
                              "with --from",
                              argv[i]);
    } else if (!out) {
      out = argv[i];
    } else {
      rc = sl_cli_usage_error("pack", "one OUT only with --from");
    }
  }
  if (rc == 0 && (!from || !out)) {
    usage(stderr);
    rc = 2;
  }
  if (rc == 0 && sl_config_set(cfg, "dataset.path", from) != SL_OK)
    rc = sl_cli_usage_error("pack", "%s", sl_config_errmsg(cfg));
  if (rc) {
    sl_config_destroy(cfg);
    return rc;
  }
  sl_dataset *ds;
  sl_status st = sl_dataset_open(&ds, cfg);
  sl_config_destroy(cfg);
  if (st != SL_OK) {
    rc = fail_ds(ds);
    sl_dataset_close(ds);
    return rc;
  }
  char settings[1200];
  snprintf(settings, sizeof settings, "sluice pack --from %s (layout %s)%s",
           from, sl_dataset_layout_name(ds), keep ? " --keep-jpeg" : "");
  sl_writer_options wo = {0};
  wo.target_width = sl_dataset_target_width(ds);
  wo.keep_jpeg = keep;
  wo.replace = force;
  wo.settings = settings;
  sl_writer *w;
  if (sl_writer_create(&w, out, &wo) != SL_OK) {
    rc = fail_w(w);
    sl_writer_destroy(w);
    sl_dataset_close(ds);
    return rc;
  }
  for (uint32_t c = 0; c < sl_dataset_class_count(ds) && rc == 0; c++)
    if (sl_writer_set_class_name(w, c, sl_dataset_class_name(ds, c)) != SL_OK)
      rc = fail_w(w);
  uint8_t *buf = NULL;
  size_t cap = 0;
  uint64_t n = sl_dataset_count(ds);
  for (uint64_t i = 0; i < n && rc == 0; i++)
    rc = sl_pack_copy_sample("pack", ds, w, i, &buf, &cap, from);
  free(buf);
  if (rc == 0 && sl_writer_commit(w) != SL_OK)
    rc = fail_w(w);
  if (rc == 0)
    printf("sluice pack: %" PRIu64 " samples from %s (layout %s) -> %s\n", n,
           from, sl_dataset_layout_name(ds), out);
  sl_writer_destroy(w);
  sl_dataset_close(ds);
  return rc;
}
