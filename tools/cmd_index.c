/* sluice index DIR: builds or refreshes DIR/sluice.index, which makes the
 * shards in DIR one dataset (sl_dataset_index). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/url_shown.h"
#include "sluice.h"
#include "tools/cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: sluice index DIR\n"
          "       sluice index URL   (WebDataset or TFRecord shards at "
          "s3:// or http(s)://)\n\n"
          "Writes DIR/sluice.index, which lists every shard in DIR (sluice "
          "LMDB or HDF5\nfiles named *.lmdb, *.mdb, *.h5 or *.hdf5, written "
          "by `sluice pack`, sl_writer\nor sluice.Writer, by any number of "
          "processes, in any order) in name order,\nso that DIR reads as "
          "one dataset (dataset.path = DIR). Run it again after\nadding "
          "shards: unchanged shards are not read again. Shards must share "
          "their\nclass names, target width and writer settings; a shard "
          "still being written\n(or whose writer died) is not listed.\n\n"
          "With a URL (a shard, a brace pattern or a list file of WebDataset "
          "or\nTFRecord shards in S3 or on a web server), it reads each shard "
          "once and\nwrites the set's sidecar index into the cache folder "
          "($XDG_CACHE_HOME/sluice,\nelse ~/.cache/sluice), which later opens "
          "read instead of the shards.\n");
}

int sl_cmd_index(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    usage(stdout);
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    usage(stderr);
    return 2;
  }
  char msg[1024];
  sl_index_report r;
  sl_status st = sl_dataset_index(argv[1], &r, msg, sizeof msg);
  if (st != SL_OK) {
    fprintf(stderr, "sluice index: %s\n", msg);
    return 1;
  }
  char b[32], shown[4096];      /* the URL printed without its credentials */
  if (strstr(argv[1], "://")) { /* foreign shards at a URL: the sidecar */
    printf("%s: %" PRIu64 " shards, %" PRIu64
           " samples, %s of shards read once; sidecar index of %" PRIu64
           " bytes written to the cache folder\n",
           sl_url_shown(argv[1], shown, sizeof shown), r.shards, r.samples,
           sl_format_bytes(r.shard_bytes, b, sizeof b), r.index_bytes);
    return 0;
  }
  printf("%s/sluice.index: %" PRIu64 " shards, %" PRIu64
         " samples, %s of shards (%" PRIu64 " read for checksums)\n",
         argv[1], r.shards, r.samples,
         sl_format_bytes(r.shard_bytes, b, sizeof b), r.checksummed);
  return 0;
}
