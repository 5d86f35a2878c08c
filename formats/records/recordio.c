/* MXNet RecordIO framing and IRHeader (formats/records/recordio.h). */
#include "formats/records/recordio.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static const char *part_name(uint32_t cflag) {
  return cflag == 0   ? "whole"
         : cflag == 1 ? "first"
         : cflag == 2 ? "middle"
                      : "last";
}

const char *sl_recio_walk(const uint8_t *p, uint64_t avail, sl_recio_rec *r,
                          uint8_t *out, size_t cap, char *why, size_t why_cap) {
  static const uint8_t magic[4] = {0x0a, 0x23, 0xd7, 0xce};
  memset(r, 0, sizeof *r);
  uint64_t pos = 0, joined = 0;
  for (;;) {
    if (avail - pos < 8) {
      snprintf(why, why_cap,
               "RecordIO part %" PRIu64 " at +%" PRIu64
               ": its 8-byte header runs past the end of the file",
               r->parts, pos);
      return why;
    }
    uint32_t m = le32(p + pos), lrec = le32(p + pos + 4);
    uint32_t cflag = lrec >> 29, len = lrec & ((1u << 29) - 1);
    const char *bad = NULL;
    if (m != SL_RECIO_MAGIC)
      bad = "magic";
    else if (cflag > 3)
      bad = "cflag";
    else if (r->parts == 0 && cflag >= 2)
      bad = "start";
    else if (r->parts > 0 && cflag < 2)
      bad = "continuation";
    else if (len > avail - pos - 8)
      bad = "length";
    if (bad) {
      if (bad[0] == 'm')
        snprintf(why, why_cap,
                 "RecordIO part %" PRIu64 " at +%" PRIu64 ": magic %08" PRIx32
                 ", not ced7230a",
                 r->parts, pos, m);
      else if (bad[0] == 'c' && bad[1] == 'f')
        snprintf(why, why_cap,
                 "RecordIO part %" PRIu64 " at +%" PRIu64 ": cflag %" PRIu32
                 " (0 to 3)",
                 r->parts, pos, cflag);
      else if (bad[0] == 's')
        snprintf(why, why_cap,
                 "RecordIO record starts with a %s part (cflag %" PRIu32
                 "): an offset inside a multi-part record",
                 part_name(cflag), cflag);
      else if (bad[0] == 'c')
        snprintf(why, why_cap,
                 "RecordIO part %" PRIu64 " at +%" PRIu64
                 " is a %s part (cflag %" PRIu32 ") inside a multi-part record",
                 r->parts, pos, part_name(cflag), cflag);
      else
        snprintf(why, why_cap,
                 "RecordIO part %" PRIu64 " at +%" PRIu64 ": length %" PRIu32
                 " runs past the end of the file (%" PRIu64 " bytes left)",
                 r->parts, pos, len, avail - pos - 8);
      return why;
    }
    if (r->parts > 0) { /* the writer split here: the magic goes back */
      if (out && joined <= cap && cap - joined >= 4)
        memcpy(out + joined, magic, 4);
      joined += 4;
    }
    if (out && joined <= cap && len <= cap - joined)
      memcpy(out + joined, p + pos + 8, len);
    joined += len;
    if (r->parts++ == 0)
      r->data = 8;
    r->span = pos + 8 + len;
    uint64_t padded = ((uint64_t)len + 3) & ~(uint64_t)3;
    pos = padded > avail - pos - 8 ? avail : pos + 8 + padded;
    if (cflag == 0 || cflag == 3)
      break;
  }
  r->next = pos;
  r->joined = joined;
  if (out && joined > cap) {
    snprintf(why, why_cap,
             "RecordIO record joins to %" PRIu64 " bytes, more than the %zu "
             "expected",
             joined, cap);
    return why;
  }
  return NULL;
}

const char *sl_irheader_parse(const uint8_t *payload, size_t n, sl_irheader *h,
                              char *why, size_t why_cap) {
  memset(h, 0, sizeof *h);
  if (n < SL_IRHEADER_BYTES) {
    snprintf(why, why_cap,
             "payload of %zu bytes, shorter than the 24-byte IRHeader", n);
    return why;
  }
  h->flag = le32(payload);
  uint32_t u = le32(payload + 4);
  memcpy(&h->label, &u, sizeof h->label);
  h->id = le64(payload + 8);
  h->id2 = le64(payload + 16);
  if (h->flag > (n - SL_IRHEADER_BYTES) / 4) {
    snprintf(why, why_cap,
             "IRHeader flag %" PRIu32 ": that many float labels run past "
             "the payload's %zu bytes",
             h->flag, n);
    return why;
  }
  h->bytes = SL_IRHEADER_BYTES + 4 * (uint64_t)h->flag;
  return NULL;
}

float sl_irheader_label(const uint8_t *payload, uint32_t q) {
  uint32_t u = le32(payload + SL_IRHEADER_BYTES + 4 * (size_t)q);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static bool blank(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int sl_recio_idx_next(const uint8_t *idx, size_t len, size_t *pos,
                      uint64_t *line, uint64_t *offset) {
  while (*pos < len) {
    size_t b = *pos;
    const uint8_t *nl = memchr(idx + b, '\n', len - b);
    size_t e = nl ? (size_t)(nl - idx) + 1 : len; /* the newline's in */
    ++*line;
    if (e - b > SL_RECIO_IDX_LINE)
      return -1;
    *pos = e;
    size_t p = b;
    while (p < e && blank(idx[p]))
      p++;
    if (p == e)
      continue; /* a blank line */
    while (p < e && idx[p] != ' ' && idx[p] != '\t' && idx[p])
      p++; /* the key */
    while (p < e && (idx[p] == ' ' || idx[p] == '\t'))
      p++;
    uint64_t v = 0;
    size_t digits = 0;
    while (p < e && idx[p] >= '0' && idx[p] <= '9' &&
           v <= (UINT64_MAX - 9) / 10)
      v = v * 10 + (uint64_t)(idx[p++] - '0'), digits++;
    while (p < e && blank(idx[p]))
      p++;
    if (!digits || p != e)
      return -1;
    *offset = v;
    return 1;
  }
  return 0;
}

int sl_recio_idx_name(const char *path, char *buf, size_t cap) {
  size_t n = strlen(path);
  bool rec = n >= 4 && strcmp(path + n - 4, ".rec") == 0;
  int w = snprintf(buf, cap, "%.*s.idx", (int)(rec ? n - 4 : n), path);
  return w < 0 || (size_t)w >= cap ? -1 : 0;
}
