/* Progress of a long command on stderr: a bar redrawn in place on a
 * terminal (images/s, MB/s, ETA), a plain line every 5 s otherwise. */
#ifndef SLUICE_TOOLS_PACK_PROGRESS_H
#define SLUICE_TOOLS_PACK_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sl_progress {
  bool tty, quiet, drawn;
  double start, last;
  uint64_t total;
  const char *what; /* "images" */
} sl_progress;

double sl_now(void); /* monotonic seconds */
void sl_progress_init(sl_progress *p, uint64_t total, const char *what,
                      bool quiet);
/* done items, bytes read so far; force draws now. */
void sl_progress_update(sl_progress *p, uint64_t done, uint64_t bytes,
                        bool force);
/* Ends the bar's line (if one is drawn). */
void sl_progress_end(sl_progress *p);

#endif
