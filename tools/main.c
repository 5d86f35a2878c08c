/* `sluice`: dispatches to the subcommands listed in k_commands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sluice.h"
#include "tools/cli.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const sl_cli_command k_commands[] = {
    {"config", "list options, check or show a config file", sl_cmd_config},
    {"synth", "write a deterministic folder of photo-like test JPEGs",
     sl_cmd_synth},
    {"pack", "pack an image folder into an LMDB or HDF5 file", sl_cmd_pack},
    {"index", "make a folder of shards one dataset (writes DIR/sluice.index)",
     sl_cmd_index},
    {"info", "describe a dataset file", sl_cmd_info},
    {"verify", "check every record of a dataset file (--decode: images too)",
     sl_cmd_verify},
    {"extract", "write samples' stored images to files, by index",
     sl_cmd_extract},
    {"schedule", "resolution per epoch and the memory a loader will hold",
     sl_cmd_schedule},
    {"preview", "a PNG grid of an epoch's first samples, recipe ops on",
     sl_cmd_preview},
    {"bench", "images/s of a config's loader on this machine, per epoch",
     sl_cmd_bench},
    {"version", "print the version", cmd_version},
    {"help", "this list", cmd_help},
};
enum { k_ncommands = sizeof k_commands / sizeof k_commands[0] };

static int cmd_version(int argc, char **argv) {
  printf("sluice %s\n", sl_version_string());
  return 0;
}

static int cmd_help(int argc, char **argv) {
  printf("usage: sluice COMMAND [ARGS...]\n\n"
         "sluice feeds GPUs from image datasets larger than RAM.\n\n"
         "commands:\n");
  for (int i = 0; i < k_ncommands; i++)
    printf("  %-10s %s\n", k_commands[i].name, k_commands[i].summary);
  printf("\n`sluice COMMAND --help` describes a command.\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    cmd_help(argc, argv);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
    return cmd_version(argc - 1, argv + 1);
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    return cmd_help(argc - 1, argv + 1);
  for (int i = 0; i < k_ncommands; i++)
    if (strcmp(name, k_commands[i].name) == 0)
      return k_commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "sluice: unknown command '%s' (try `sluice help`)\n", name);
  return 2;
}
