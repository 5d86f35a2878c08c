/* Progress of a long command on stderr: a bar redrawn in place on a
 * terminal (images/s, MB/s, ETA), a plain line every 5 s otherwise, or,
 * for a program driving the command (the Python package's sluice.pack),
 * a "progress DONE TOTAL BYTES" line every 0.25 s. */
#ifndef SLUICE_TOOLS_PACK_PROGRESS_H
#define SLUICE_TOOLS_PACK_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum sl_progress_mode {
  SL_PROGRESS_AUTO,  /* the bar on a terminal, plain lines otherwise */
  SL_PROGRESS_LINES, /* machine-readable lines */
  SL_PROGRESS_NONE
} sl_progress_mode;

typedef struct sl_progress {
  sl_progress_mode mode;
  bool tty, drawn;
  double start, last;
  uint64_t total;
  const char *what; /* "images" */
} sl_progress;

double sl_now(void); /* monotonic seconds */
void sl_progress_init(sl_progress *p, uint64_t total, const char *what,
                      sl_progress_mode mode);
/* done items, bytes read so far; force draws now. */
void sl_progress_update(sl_progress *p, uint64_t done, uint64_t bytes,
                        bool force);
/* Ends the bar's line (if one is drawn). */
void sl_progress_end(sl_progress *p);

#endif
