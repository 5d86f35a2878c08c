/* `sluice info PATH --speed`: packs an evenly spread sample of a dataset
 * read in place into a temporary sluice file (removed again, also on
 * error), then times a one-worker loader taking the same number of
 * random-resized crops from the dataset in place and from the packed
 * sample, alternately, and prints the median ratio of CPU time (and of
 * wall time) as a `speed:` line. */
#ifndef SLUICE_TOOLS_INFO_SPEED_H
#define SLUICE_TOOLS_INFO_SPEED_H

#include "sluice.h"

/* ds: the dataset opened from path with the --set pairs kv ("key",
 * "value", ..., NULL; NULL for none), which the loader gets too. samples
 * 1..65536, res 8..8192. Temporary files go under $TMPDIR (else /tmp).
 * Returns 0, or 1 after printing why to stderr. */
int sl_info_speed(sl_dataset *ds, const char *path, const char *const *kv,
                  long long samples, long long res);

#endif
