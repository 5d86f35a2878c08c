/* The `sluice` command: one function per subcommand, one file each.
 *
 * A subcommand gets argv starting at its own name and returns the process
 * exit status: 0 on success, 1 when the work failed (bad data, failed
 * check), 2 for a usage error. */
#ifndef SLUICE_TOOLS_CLI_H
#define SLUICE_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
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
/* `sluice pack --from FILE OUT`: called by sl_cmd_pack when --from is
 * given (tools/cmd_pack_from.c). */
int sl_cmd_pack_from(int argc, char **argv);
int sl_cmd_index(int argc, char **argv);
int sl_cmd_info(int argc, char **argv);
int sl_cmd_verify(int argc, char **argv);
int sl_cmd_extract(int argc, char **argv);
int sl_cmd_preview(int argc, char **argv);
int sl_cmd_bench(int argc, char **argv);

/* Parses all of s as a decimal integer in [lo, hi] into *out. Returns 1,
 * or 0 (leaving *out alone) on an empty string, trailing characters, a
 * sign where lo >= 0, overflow, or a value out of range. */
int sl_cli_parse_int(const char *s, long long lo, long long hi, long long *out);
/* The same for an unsigned 64-bit value (no sign allowed). */
int sl_cli_parse_u64(const char *s, unsigned long long *out);

/* Loads the config file at path, applies the key/value pairs of kv (a
 * NULL-terminated list "key", "value", ...; NULL for none) and opens its
 * loader. On failure prints "sluice CMD: message" (the config's message:
 * file and line, key, or the loader's open error) and returns NULL. */
struct sl_loader *sl_cli_open_loader(const char *cmd, const char *path,
                                     const char *const *kv);

/* Prints "sluice NAME: message" to stderr and returns 2 (usage error). */
int sl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
