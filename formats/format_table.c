/* The formats sluice reads, one row each (formats/format.h). The order is
 * the order in which readers of many files claim a path (a folder with a
 * shard index before anything else reads the folder, WebDataset's .tar
 * patterns before record shards' patterns, a folder before either) and in
 * which one-file formats win a sniffing tie and are listed in messages. */
#include "formats/format.h"

const sl_format *const sl_format_table[] = {
    &sl_format_shards,   &sl_format_webdataset, &sl_format_folder,
    &sl_format_lmdb,     &sl_format_hdf5,       &sl_format_tfrecord,
    &sl_format_recordio,
};
const size_t sl_format_table_len =
    sizeof sl_format_table / sizeof sl_format_table[0];
