/* What bench_formats.c and bench_formats_many.c share. */
#ifndef SLUICE_BENCH_FORMATS_H
#define SLUICE_BENCH_FORMATS_H

#include <stdbool.h>
#include <stdint.h>

double bench_now(void);
/* n records of the same 4x4 gray PNG in a TFRecord (recordio 0) or an
 * MXNet RecordIO file (with its .idx when idx), labels from first. */
int bench_write_records(const char *path, int recordio, bool idx, uint64_t n,
                        uint64_t first);
/* Open time of n samples as many files: TFRecord and RecordIO shards,
 * WebDataset tar shards (shards of each), and an ImageFolder of
 * folder_files files (0: skipped). */
void bench_open_many(const char *dir, uint64_t n, unsigned shards,
                     uint64_t folder_files);

#endif
