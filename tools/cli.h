/* The `sluice` command: one function per subcommand, one file each.
 *
 * A subcommand gets argv starting at its own name and returns the process
 * exit status: 0 on success, 1 when the work failed (bad data, failed
 * check), 2 for a usage error. */
#ifndef SLUICE_TOOLS_CLI_H
#define SLUICE_TOOLS_CLI_H

#include <stdio.h>

typedef int (*sl_cli_fn)(int argc, char **argv);

typedef struct sl_cli_command {
  const char *name;
  const char *summary;
  sl_cli_fn run;
} sl_cli_command;

int sl_cmd_config(int argc, char **argv);
int sl_cmd_schedule(int argc, char **argv);
int sl_cmd_synth(int argc, char **argv);
int sl_cmd_pack(int argc, char **argv);
int sl_cmd_info(int argc, char **argv);
int sl_cmd_verify(int argc, char **argv);

/* Prints "sluice NAME: message" to stderr and returns 2 (usage error). */
int sl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
