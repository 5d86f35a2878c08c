/* Where a request's region lies in the image at a DCT scale, and how much
 * it is box-reduced: the plan every codec's decode starts from. A leaf
 * below the codecs (they call it; it calls none of them). */
#include "codecs/codec_impl.h"

static int plan_axis(int pos, int len, int side, int m, int *p0) {
  int s = sl_scaled_side(side, m);
  int a = (int)(((int64_t)pos * m + 4) / 8);
  int b = (int)(((int64_t)(pos + len) * m + 4) / 8);
  if (b > s)
    b = s;
  if (a > s - 1)
    a = s - 1;
  if (b <= a)
    b = a + 1;
  *p0 = a;
  return b - a;
}

/* The box factor for a scaled region side r: 1 below 2 * min (or when
 * min is 0), else floor(r / min), which leaves the side in [min, 2 * min).
 * A pure function of the request, so outputs never depend on the caps. */
static int reduce_factor(int r, int min) {
  return min > 0 && r >= 2 * min ? r / min : 1;
}

sl_status sl_region_plan(const sl_decoder *d, const char *codec,
                         const sl_decode_req *req, int img_w, int img_h, int m,
                         sl_region *r, sl_err *err) {
  r->rw = plan_axis(req->x, req->w, img_w, m, &r->x0);
  r->rh = plan_axis(req->y, req->h, img_h, m, &r->y0);
  r->kx = reduce_factor(r->rw, req->min_w);
  r->ky = reduce_factor(r->rh, req->min_h);
  int nx = (r->rw + r->kx - 1) / r->kx, ny = (r->rh + r->ky - 1) / r->ky;
  if (nx > d->cap_w || ny > d->cap_h)
    return sl_err_set(err, SL_ETOOBIG,
                      "%s: region %dx%d at %d/8 exceeds the decoder's %dx%d "
                      "scratch",
                      codec, nx, ny, m, d->cap_w, d->cap_h);
  return SL_OK;
}
