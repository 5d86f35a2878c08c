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
#include "tools/pack/pack_out.h"

static int fail_ds(sl_dataset *ds) {
  fprintf(stderr, "sluice pack: %s\n", sl_dataset_errmsg(ds));
  return 1;
}

static int fail_msg(const char *msg) {
  fprintf(stderr, "sluice pack: %s\n", msg);
  return 1;
}

/* --set dataset.KEY=VALUE, applied to the config that reads FILE; a value
 * the config refuses is told in the config's words. */
static int parse_set(const char *arg, void *dst) {
  sl_config *cfg = dst;
  char kv[1024];
  snprintf(kv, sizeof kv, "%s", arg);
  char *eq = strchr(kv, '=');
  if (!eq || strncmp(kv, "dataset.", 8) != 0)
    return 0;
  *eq = '\0';
  if (sl_config_set(cfg, kv, eq + 1) != SL_OK) {
    sl_cli_usage_error("pack", "%s", sl_config_errmsg(cfg));
    return -1;
  }
  return 1;
}

static const char *const k_formats[] = {"lmdb", "hdf5", NULL};

int sl_cmd_pack_from(int argc, char **argv) {
  const char *from = NULL, *out = NULL;
  bool keep = false, force = false;
  long long shards = 0;
  int fmt = -1;
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice pack: out of memory\n");
    return 1;
  }
  const sl_cli_opt opts[] = {
      {.name = "--from",
       .kind = SL_CLI_STRING,
       .value = "FILE",
       .needs = "a dataset file",
       .help = "the dataset to rewrite",
       .dst = &from},
      {.name = "--set",
       .kind = SL_CLI_CUSTOM,
       .value = "KEY=VALUE",
       .needs = "dataset.KEY=VALUE",
       .help = "a dataset.* option for reading FILE, e.g.\n"
               "dataset.label_file=labels.txt, dataset.channel_order=rgb,\n"
               "dataset.lmdb_db=train (repeatable)",
       .dst = cfg,
       .parse = parse_set},
      {.name = "--keep-jpeg",
       .kind = SL_CLI_FLAG,
       .help = "store JPEGs byte for byte",
       .dst = &keep},
      {.name = "--force",
       .kind = SL_CLI_FLAG,
       .help = "replace OUT if it exists",
       .dst = &force},
      {.name = "--shards",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 100000,
       .help = "OUT is a folder of N shards and their index (docs/SHARDS.md)",
       .dst = &shards},
      {.name = "--format",
       .kind = SL_CLI_ENUM,
       .value = "F",
       .choices = k_formats,
       .help = "the shards' format: lmdb (default) or hdf5",
       .dst = &fmt},
  };
  const sl_cli_spec spec = {
      .cmd = "pack",
      .head = "usage: sluice pack --from FILE OUT [--set KEY=VALUE]... "
              "[--keep-jpeg] [--force]\n"
              "                   [--shards N [--format lmdb|hdf5]]\n\n"
              "Rewrites the dataset FILE (sluice's own, a Caffe Datum LMDB or "
              "an LMDB\nof image files) as OUT in sluice's layout (format from "
              "OUT's extension),\nkeeping labels, class names, targets and "
              "sample names. JPEG/PNG samples\nare stored as files (JPEGs "
              "rewritten losslessly into the restart layout);\nraw arrays "
              "and WebP as raw pixels.\n",
      .column = 17,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &out,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one OUT only with --from"};
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc < 0 && !from) {
    sl_cli_usage(&spec, stderr);
    rc = 2;
  }
  if (rc < 0 && sl_config_set(cfg, "dataset.path", from) != SL_OK)
    rc = sl_cli_usage_error("pack", "%s", sl_config_errmsg(cfg));
  if (rc >= 0) {
    sl_config_destroy(cfg);
    return rc;
  }
  rc = 0;
  const char *format = fmt >= 0 ? k_formats[fmt] : NULL;
  sl_dataset *ds;
  sl_status st = sl_dataset_open(&ds, cfg);
  sl_config_destroy(cfg);
  if (st != SL_OK) {
    rc = fail_ds(ds);
    sl_dataset_close(ds);
    return rc;
  }
  char settings[1200];
  snprintf(settings, sizeof settings, "sluice pack --from %s (entries %s)%s",
           from, sl_dataset_entries(ds), keep ? " --keep-jpeg" : "");
  sl_writer_options wo = {0};
  wo.target_width = sl_dataset_target_width(ds);
  wo.keep_jpeg = keep;
  wo.replace = force;
  wo.settings = settings;
  wo.format = shards ? (format ? format : "lmdb") : format;
  uint32_t nclasses = sl_dataset_class_count(ds);
  const char **classes = calloc(nclasses ? nclasses : 1, sizeof *classes);
  if (!classes)
    rc = fail_msg("out of memory");
  for (uint32_t c = 0; rc == 0 && c < nclasses; c++)
    classes[c] = sl_dataset_class_name(ds, c);
  uint64_t n = sl_dataset_count(ds);
  char msg[1024];
  sl_pack_out *po = NULL;
  if (rc == 0 && sl_pack_out_open(&po, out, (uint32_t)shards, (size_t)n, &wo,
                                  classes, nclasses, msg, sizeof msg) != 0)
    rc = fail_msg(msg);
  uint8_t *buf = NULL;
  size_t cap = 0;
  for (uint64_t i = 0; i < n && rc == 0; i++) {
    sl_writer *w = sl_pack_out_writer(po, (size_t)i, msg, sizeof msg);
    rc = w ? sl_pack_copy_sample("pack", ds, w, i, &buf, &cap, from)
           : fail_msg(msg);
  }
  free(buf);
  if (rc == 0 && sl_pack_out_commit(po, msg, sizeof msg) != 0)
    rc = fail_msg(msg);
  if (rc == 0)
    printf("sluice pack: %" PRIu64 " samples from %s (entries %s) -> %s\n", n,
           from, sl_dataset_entries(ds), out);
  sl_pack_out_close(po, rc == 0);
  free(classes);
  sl_dataset_close(ds);
  return rc;
}
