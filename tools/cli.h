/* The `sluice` command: one function per subcommand, one file each.
 *
 * A subcommand gets argv starting at its own name and returns the process
 * exit status: 0 on success, 1 when the work failed (bad data, failed
 * check), 2 for a usage error. */
#ifndef SLUICE_TOOLS_CLI_H
#define SLUICE_TOOLS_CLI_H

#include <stdbool.h>
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

/* ---- Options from a table (cli_args.c) ---------------------------------
 * A command lists its options once, as rows of sl_cli_opt; sl_cli_parse
 * walks argv against them and sl_cli_usage prints the help from them, so
 * an option's spelling, range, message and help are written in one row.
 * Values follow their option as the next argument ("--epochs 3") or join
 * it after '=' ("--epochs=3"). */
typedef enum sl_cli_kind {
  SL_CLI_FLAG,   /* no value: *(bool *)dst = true */
  SL_CLI_INT,    /* *(long long *)dst, in [lo, hi] (sl_cli_parse_int) */
  SL_CLI_U64,    /* *(unsigned long long *)dst (sl_cli_parse_u64) */
  SL_CLI_STRING, /* *(const char **)dst = the argument */
  SL_CLI_ENUM,   /* *(int *)dst = the index of the argument in choices */
  SL_CLI_CUSTOM  /* parse(argument, dst) returns 1, 0 to refuse it, or -1
                    after printing its own usage error (a message the row's
                    needs cannot hold: the config's own, say) */
} sl_cli_kind;

typedef struct sl_cli_opt {
  const char *name; /* "--epochs" */
  char short_name;  /* 'e' for "-e", or 0 */
  sl_cli_kind kind;
  const char *value; /* the value's name in the help: "E" (NULL: FLAG) */
  long long lo, hi;  /* INT: the range */
  /* The refusal, "NAME: 'VALUE' (<needs>)", or "NAME needs <needs>" when
   * the value is missing ("a number": INT adds " lo..hi"). */
  const char *needs;
  const char *help; /* its help: "\n" starts a line under the first */
  void *dst;
  const char *const *choices;               /* ENUM: NULL-terminated */
  int (*parse)(const char *arg, void *dst); /* CUSTOM */
} sl_cli_opt;

typedef struct sl_cli_spec {
  const char *cmd;        /* "bench": messages say "sluice bench: ..." */
  const char *head;       /* the help above the options ("usage: ...") */
  const char *tail;       /* below them, or NULL */
  int column;             /* where the options' help starts (after 2) */
  const sl_cli_opt *opts; /* nopts rows */
  int nopts;
  const char **pos;     /* the arguments that are no option, in order */
  int min_pos, max_pos; /* fewer: the help on stderr, a usage error */
  const char *too_many; /* the message for one more: "one CONFIG only" */
} sl_cli_spec;

/* Parses argv[1..argc) against spec: options into their dst, the other
 * arguments into spec->pos. Returns -1 to go on, 0 after printing the help
 * for --help or -h, or 2 after printing a usage error (an unknown option,
 * a missing or refused value, too many or too few arguments). */
int sl_cli_parse(const sl_cli_spec *spec, int argc, char **argv, int *npos);
/* Prints spec's help: head, a line or more per option, tail. */
void sl_cli_usage(const sl_cli_spec *spec, FILE *f);

/* Prints "sluice NAME: message" to stderr and returns 2 (usage error). */
int sl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
