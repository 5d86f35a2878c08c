/* A list file of images and their labels, one image a line: the lists an
 * image folder is read through (dataset.format = folder, dataset.path the
 * list). Two forms, fixed by a list's first image line:
 *
 *   PATH LABEL                 torchvision-style and Caffe ImageData lists
 *                              (`convert_imageset` reads the same): the
 *                              label the last blank-separated field, an
 *                              integer -1 .. 2^31-1; the path everything
 *                              before it, trimmed (it may hold spaces)
 *   INDEX<TAB>LABEL...<TAB>PATH
 *                              MXNet im2rec's .lst: INDEX an unsigned
 *                              integer (not used: line order is sample
 *                              order), one or more float labels, the path
 *                              last (it may hold spaces)
 *
 * Blank lines and lines starting with # are skipped. im2rec labels: one
 * must be a class index (an integer-valued float, as im2rec writes
 * "3.000000"); K > 1 are the sample's float targets (the same K on every
 * line) and the first, when an integer, its label (else -1), as a
 * RecordIO record's flag labels are read. */
#ifndef SLUICE_FORMATS_IMAGE_LIST_H
#define SLUICE_FORMATS_IMAGE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sl_list_form {
  SL_LIST_ANY,        /* not yet known: the first image line decides */
  SL_LIST_PATH_LABEL, /* PATH LABEL */
  SL_LIST_IM2REC      /* INDEX\tLABEL...\tPATH */
} sl_list_form;

typedef struct sl_list_line {
  const char *path;  /* inside the line given; NOT NUL-terminated */
  size_t path_len;   /* 0: a blank or comment line (nothing else set) */
  int32_t label;     /* -1: none */
  uint32_t ntargets; /* im2rec with K > 1 labels: K, written to targets */
} sl_list_line;

/* Parses line[0, len) (no newline; a trailing \r is ignored) in *form
 * (SL_LIST_ANY: this line decides it, and *form is set). targets gets up to
 * cap floats. NULL, or a reason (into why, cap_why bytes): not the list's
 * form, a label that is not an integer in range, a path missing, more
 * than cap labels. Reads only line[0, len); never allocates. */
const char *sl_list_parse_line(const char *line, size_t len, sl_list_form *form,
                               sl_list_line *out, float *targets, uint32_t cap,
                               char *why, size_t cap_why);

/* Whether name ends in an extension sluice decodes (.jpg .jpeg .png .webp,
 * any case). */
bool sl_list_image_name(const char *name, size_t len);

#endif
