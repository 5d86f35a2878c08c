/* sl_dataset_index (sluice.h, "Sharded datasets"): formats/'s index
 * builder behind the public API's conventions; for foreign shards at a
 * URL, their sidecar index built again (formats/files/shards_remote.h). */
#include <stdio.h>
#include <string.h>

#include "formats/core/source.h"
#include "formats/shards/shard_index_build.h"
#include "sluice.h"

/* A set at a URL opened with its sidecar built again, in the default
 * cache folder (io.cache_dir's default). */
static sl_status index_url(const char *url, sl_shard_index_report *rep,
                           sl_err *err) {
  sl_source *src;
  sl_source_opts o = {.fmt = SL_FORMAT_AUTO, .reindex = true};
  sl_status st = sl_source_open_opts(&src, url, &o, SL_SOURCE_PREAD, err);
  if (st != SL_OK)
    return st;
  memset(rep, 0, sizeof *rep);
  rep->shards = sl_source_file_count(src);
  rep->samples = sl_source_count(src);
  rep->bytes = sl_source_bytes(src);
  rep->checksummed = rep->shards;
  rep->index_bytes = sl_source_sidecar_bytes(src);
  sl_source_close(src);
  return SL_OK;
}

sl_status sl_dataset_index(const char *dir, sl_index_report *report, char *msg,
                           size_t msg_len) {
  if (msg && msg_len)
    msg[0] = '\0';
  if (report)
    memset(report, 0, sizeof *report);
  sl_err err = {0};
  sl_status st;
  sl_shard_index_report rep;
  if (!dir || !*dir)
    st = sl_err_set(&err, SL_EINVAL, "sl_dataset_index: no folder");
  else if (sl_url_kind_of(dir) != SL_URL_NONE)
    st = index_url(dir, &rep, &err);
  else
    st = sl_shard_index_build(dir, &rep, &err);
  if (st != SL_OK) {
    if (msg && msg_len)
      snprintf(msg, msg_len, "%s", err.msg);
    return st;
  }
  if (report) {
    report->shards = rep.shards;
    report->samples = rep.samples;
    report->shard_bytes = rep.bytes;
    report->index_bytes = rep.index_bytes;
    report->checksummed = rep.checksummed;
  }
  return SL_OK;
}
