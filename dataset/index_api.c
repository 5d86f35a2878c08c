/* sl_dataset_index (sluice.h, "Sharded datasets"): formats/'s index
 * builder behind the public API's conventions. */
#include <stdio.h>
#include <string.h>

#include "formats/shard_index_build.h"
#include "sluice.h"

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
