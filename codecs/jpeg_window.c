/* Restart-segment windows onto baseline JPEGs (see jpeg_window.h). */
#include "codecs/jpeg_window.h"

#include <string.h>

#include "common/endian.h"

enum {
  k_sof0 = 0xC0,
  k_sof1 = 0xC1,
  k_dht = 0xC4,
  k_jpg = 0xC8,
  k_dac = 0xCC,
  k_sof15 = 0xCF,
  k_rst0 = 0xD0,
  k_rst7 = 0xD7,
  k_soi = 0xD8,
  k_eoi = 0xD9,
  k_sos = 0xDA,
  k_dri = 0xDD,
  k_app0 = 0xE0,
  k_app14 = 0xEE,
  k_app15 = 0xEF,
  k_com = 0xFE
};

/* One marker segment of the header: its code, and where its payload
 * (after the 2-byte length) starts and ends. */
typedef struct seg {
  int code;
  size_t start; /* offset of the first 0xFF of the marker */
  size_t body, end;
} seg;

/* Reads the header marker at *p; 0 on anything but a marker with a length
 * that fits. Fill bytes (extra 0xFF) before the code are allowed. */
static int next_header_seg(const uint8_t *b, size_t n, size_t *p, seg *s) {
  size_t q = *p;
  if (q >= n || b[q] != 0xFF)
    return 0;
  s->start = q;
  while (q < n && b[q] == 0xFF)
    q++;
  if (q + 3 > n)
    return 0;
  s->code = b[q];
  if (s->code == 0x00 || s->code == 0x01 || s->code == k_soi ||
      s->code == k_eoi || (s->code >= k_rst0 && s->code <= k_rst7))
    return 0; /* no length, or not where a header may have it */
  size_t len = sl_get_be16(b + q + 1);
  if (len < 2 || len > n - (q + 1))
    return 0;
  s->body = q + 3;
  s->end = q + 1 + len;
  *p = s->end;
  return 1;
}

static int read_sof(const uint8_t *s, size_t len, sl_jpeg_grid *lo,
                    int ids[4]) {
  if (len < 6 || s[0] != 8)
    return 0;
  lo->height = (int)sl_get_be16(s + 1);
  lo->width = (int)sl_get_be16(s + 3);
  lo->comps = s[5];
  if (lo->height < 1 || lo->width < 1 || lo->comps < 1 || lo->comps > 4 ||
      len < 6 + 3 * (size_t)lo->comps)
    return 0; /* height 0 means a DNL marker later: not supported here */
  for (int c = 0; c < lo->comps; c++) {
    const uint8_t *ci = s + 6 + 3 * c;
    ids[c] = ci[0];
    lo->h_samp[c] = ci[1] >> 4;
    lo->v_samp[c] = ci[1] & 15;
    if (lo->h_samp[c] < 1 || lo->h_samp[c] > 4 || lo->v_samp[c] < 1 ||
        lo->v_samp[c] > 4)
      return 0;
    if (lo->h_samp[c] > lo->h_max)
      lo->h_max = lo->h_samp[c];
    if (lo->v_samp[c] > lo->v_max)
      lo->v_max = lo->v_samp[c];
  }
  return 1;
}

/* The scan must be the whole image: every component, full spectrum. */
static int read_sos(const uint8_t *s, size_t len, const sl_jpeg_grid *lo,
                    const int ids[4]) {
  if (len < 1 || s[0] != lo->comps || len < 1 + 2 * (size_t)s[0] + 3)
    return 0;
  unsigned seen = 0;
  for (int i = 0; i < lo->comps; i++) {
    int c = 0;
    while (c < lo->comps && ids[c] != s[1 + 2 * i])
      c++;
    if (c == lo->comps || seen & (1u << c))
      return 0;
    seen |= 1u << c;
  }
  const uint8_t *t = s + 1 + 2 * lo->comps;
  return t[0] == 0 && t[1] == 63 && t[2] == 0;
}

static int set_geometry(sl_jpeg_grid *lo) {
  if (lo->comps == 1) { /* non-interleaved: an MCU is one block */
    lo->mcu_w = lo->mcu_h = 8;
  } else {
    lo->mcu_w = 8 * lo->h_max;
    lo->mcu_h = 8 * lo->v_max;
  }
  lo->mcus_x = (lo->width + lo->mcu_w - 1) / lo->mcu_w;
  lo->mcus_y = (lo->height + lo->mcu_h - 1) / lo->mcu_h;
  if (lo->interval < 1)
    return 0;
  if (lo->mcus_x % lo->interval == 0) {
    lo->seg_w = lo->interval;
    lo->seg_rows = 1;
    return 1;
  }
  if (lo->interval % lo->mcus_x == 0) {
    lo->seg_w = lo->mcus_x;
    lo->seg_rows = lo->interval / lo->mcus_x;
    return 1;
  }
  return 0;
}

int sl_jpeg_grid_read(const uint8_t *b, size_t n, sl_jpeg_grid *lo) {
  memset(lo, 0, sizeof *lo);
  if (n < 4 || b[0] != 0xFF || b[1] != k_soi)
    return 0;
  int ids[4] = {0}, have_sof = 0;
  seg s;
  for (size_t p = 2; next_header_seg(b, n, &p, &s);) {
    const uint8_t *body = b + s.body;
    size_t len = s.end - s.body;
    if (s.code == k_sof0 || s.code == k_sof1) {
      if (have_sof || !read_sof(body, len, lo, ids))
        return 0;
      lo->sof_dims = s.body + 1;
      have_sof = 1;
    } else if (s.code > k_sof1 && s.code <= k_sof15 && s.code != k_dht &&
               s.code != k_jpg && s.code != k_dac) {
      return 0; /* progressive, lossless or arithmetic-coded */
    } else if (s.code == k_dri) {
      if (len < 2)
        return 0;
      lo->interval = (int)sl_get_be16(body);
    } else if (s.code == k_sos) {
      if (!have_sof || !read_sos(body, len, lo, ids))
        return 0;
      lo->entropy = s.end;
      return set_geometry(lo);
    }
  }
  return 0;
}

void sl_jpeg_window_margin(const sl_jpeg_grid *lo, int m, int *mx, int *my) {
  *mx = *my = 0;
  if (lo->comps == 1)
    return;
  /* libjpeg-turbo (jdmaster.c) decodes a subsampled component with a
   * larger IDCT, doubling while both of its ratios allow, instead of
   * upsampling; whatever ratio is left is upsampled. */
  for (int c = 0; c < lo->comps; c++) {
    int s = m;
    while (s < 8 && (lo->h_max * m) % (lo->h_samp[c] * s * 2) == 0 &&
           (lo->v_max * m) % (lo->v_samp[c] * s * 2) == 0)
      s *= 2;
    if (lo->h_samp[c] * s < lo->h_max * m)
      *mx = 1;
    if (lo->v_samp[c] * s < lo->v_max * m)
      *my = 1;
  }
}

/* The next marker in entropy-coded data from p: returns the offset of its
 * first 0xFF (stuffed 0xFF00 bytes are data; extra 0xFFs are fill) with
 * its code and the offset after it, or n when there is none. */
static size_t next_marker(const uint8_t *b, size_t n, size_t p, int *code,
                          size_t *after) {
  while (p < n) {
    const uint8_t *f = memchr(b + p, 0xFF, n - p);
    if (!f)
      return n;
    size_t q = (size_t)(f - b), r = q + 1;
    while (r < n && b[r] == 0xFF)
      r++;
    if (r >= n)
      return n;
    if (b[r] != 0x00) {
      *code = b[r];
      *after = r + 1;
      return q;
    }
    p = r + 1;
  }
  return n;
}

/* Copies the header segments the decoder needs (all but APP1..APP13,
 * APP15 and COM: metadata) with SOF's size set to w x h. Returns the bytes
 * written, 0 when they do not fit. */
static size_t copy_header(const uint8_t *b, const sl_jpeg_grid *lo, int w,
                          int h, uint8_t *out, size_t cap) {
  if (cap < 2)
    return 0;
  out[0] = 0xFF;
  out[1] = k_soi;
  size_t o = 2;
  seg s;
  for (size_t p = 2;
       p < lo->entropy && next_header_seg(b, lo->entropy, &p, &s);) {
    int meta = (s.code > k_app0 && s.code < k_app14) || s.code == k_app15 ||
               s.code == k_com;
    if (meta)
      continue;
    size_t len = s.end - s.start;
    if (len > cap - o)
      return 0;
    memcpy(out + o, b + s.start, len);
    if (s.start < lo->sof_dims && lo->sof_dims < s.end) {
      sl_put_be16(out + o + (lo->sof_dims - s.start), (uint16_t)h);
      sl_put_be16(out + o + (lo->sof_dims - s.start) + 2, (uint16_t)w);
    }
    o += len;
  }
  return o;
}

static int min_int(int a, int b) {
  return a < b ? a : b;
}

int sl_jpeg_window_build(const uint8_t *b, size_t n, const sl_jpeg_grid *lo,
                         int mx0, int my0, int mx1, int my1, uint8_t *out,
                         size_t cap, sl_jpeg_window *win) {
  memset(win, 0, sizeof *win);
  if (mx0 < 0 || my0 < 0 || mx1 <= mx0 || my1 <= my0 || mx1 > lo->mcus_x ||
      my1 > lo->mcus_y)
    return 0;
  int per_band = lo->mcus_x / lo->seg_w; /* segments across */
  int sc0 = mx0 / lo->seg_w, sc1 = (mx1 - 1) / lo->seg_w;
  int b0 = my0 / lo->seg_rows, b1 = (my1 - 1) / lo->seg_rows;
  win->mcu_x = sc0 * lo->seg_w;
  win->mcu_y = b0 * lo->seg_rows;
  win->width = min_int((sc1 + 1) * lo->seg_w * lo->mcu_w, lo->width) -
               win->mcu_x * lo->mcu_w;
  /* To the end of the last band, so the window holds no data past its
   * last row (libjpeg would call that extraneous). */
  win->height = min_int((b1 + 1) * lo->seg_rows * lo->mcu_h, lo->height) -
                win->mcu_y * lo->mcu_h;
  size_t o = copy_header(b, lo, win->width, win->height, out, cap);
  if (o == 0)
    return 0;
  long last = (long)b1 * per_band + sc1;
  size_t p = lo->entropy;
  int written = 0;
  for (long k = 0;; k++) {
    int code = 0;
    size_t after = 0, q = next_marker(b, n, p, &code, &after);
    if (q == n)
      return 0; /* the data ends before the window does */
    long col = k % per_band;
    if (k / per_band >= b0 && col >= sc0 && col <= sc1) {
      size_t need = (q - p) + 2;
      if (need > cap - o)
        return 0;
      if (written > 0) { /* the window's own restart sequence */
        out[o++] = 0xFF;
        out[o++] = (uint8_t)(k_rst0 + ((written - 1) & 7));
      }
      memcpy(out + o, b + p, q - p);
      o += q - p;
      written++;
    }
    if (k == last)
      break;
    if (code != k_rst0 + (int)(k & 7))
      return 0; /* not the restart marker this segment must end with */
    p = after;
  }
  if (cap - o < 2)
    return 0;
  out[o++] = 0xFF;
  out[o++] = k_eoi;
  win->len = o;
  return 1;
}
