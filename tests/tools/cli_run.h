/* Runs the built `sluice` command (env SLUICE_BIN) and captures its output. */
#ifndef SLUICE_TESTS_CLI_RUN_H
#define SLUICE_TESTS_CLI_RUN_H

#include <stddef.h>

/* Runs "$SLUICE_BIN args" through the shell with stderr merged into stdout;
 * stores up to cap-1 bytes of output in out and returns the exit status
 * (-1 if it could not run). */
int cli_run(const char *args, char *out, size_t cap);

#endif
