/* The inputs of `sluice pack`: a folder of class subfolders (labels = the
 * subfolders' names in byte order, like torchvision's ImageFolder; files
 * found recursively, in byte order, with an image extension) or a list file
 * of "relative/path label [t1 ... tK]" lines (like Caffe's
 * convert_imageset, plus K float targets a sample: every line the same K;
 * classes are then "0".."max label"). Hidden files and folders are
 * ignored. Each item's name is its path relative to the root.
 *
 * Folders: a folder met again inside itself (a symlink loop, told by its
 * device and inode against the folders above it) is not entered, and an
 * image directly in the root (not in a class folder) is not an input:
 * both are listed in `skipped`. A file reached under two names (a
 * symlinked folder or file: the same device and inode) is an input under
 * each and listed in `twice`. */
#ifndef SLUICE_TOOLS_PACK_SCAN_H
#define SLUICE_TOOLS_PACK_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

typedef struct sl_pack_item {
  char *path;      /* full path to read */
  size_t name_off; /* path + name_off: the path relative to the root */
  int32_t label;
  float *targets;    /* target_width floats; NULL when 0 */
  uint64_t dev, ino; /* folders: the file's identity (stat) */
  /* --coco/--voc (tools/pack/pack_detect.h): the image's boxes in its stored
   * pixels, and the size its annotation says (0: not checked). */
  sl_box *boxes;
  uint32_t nboxes;
  uint32_t want_w, want_h;
} sl_pack_item;

typedef struct sl_pack_note {
  char *path;   /* full path */
  char *reason; /* why it is listed */
} sl_pack_note;

/* A growing list of (path, reason): what the scan passed over, and what
 * `sluice pack` skipped. */
typedef struct sl_pack_notes {
  sl_pack_note *v;
  size_t n, cap;
} sl_pack_notes;

/* Appends copies of path and reason. Returns 0, or -1 out of memory (ns
 * unchanged). */
int sl_pack_notes_add(sl_pack_notes *ns, const char *path, const char *reason);
/* Frees the entries and empties ns. */
void sl_pack_notes_free(sl_pack_notes *ns);

typedef struct sl_pack_inputs {
  sl_pack_item *items;
  size_t n, cap;
  uint32_t target_width; /* K of the list's lines (0 for folders) */
  char **classes;
  uint32_t nclasses;
  sl_pack_notes skipped; /* found but not inputs: symlink loops, images
                            directly in the root */
  sl_pack_notes twice;   /* inputs that are the same file as an earlier one */
} sl_pack_inputs;

/* Fills in from a folder (list == NULL) or from list, whose paths are
 * relative to root. Returns 0, or -1 with a message (file, line) in msg. */
int sl_pack_scan(sl_pack_inputs *in, const char *root, const char *list,
                 char *msg, size_t msg_len);
/* Appends an item: a copy of path (its name at path + name_off), label,
 * and a copy of in->target_width targets. Returns 0, or -1 out of memory. */
int sl_pack_inputs_add(sl_pack_inputs *in, const char *path, size_t name_off,
                       int32_t label, const float *targets);
/* Shuffles the items with a permutation that depends only on seed. */
void sl_pack_shuffle(sl_pack_inputs *in, uint64_t seed);
void sl_pack_inputs_free(sl_pack_inputs *in);

#endif
