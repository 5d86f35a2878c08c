/* The resolution schedule; see schedule.h for the forms. */
#include "loader/schedule.h"

#include <math.h>

static int linear_res(const sl_schedule *s, uint64_t epoch) {
  double e = (double)epoch;
  if (e <= (double)s->start_epoch)
    return s->min;
  if (e >= (double)s->end_epoch)
    return s->max;
  double t =
      (e - (double)s->start_epoch) / (double)(s->end_epoch - s->start_epoch);
  double res = s->min + t * (s->max - s->min);
  int m = s->multiple > 0 ? s->multiple : 1;
  /* np.round rounds halves to even; so does rint in the default mode. */
  int r = (int)rint(res / m) * m;
  if (r < s->min)
    r = s->min;
  if (r > s->max)
    r = s->max;
  return r;
}

int sl_schedule_res(const sl_schedule *s, uint64_t epoch) {
  if (s->eval)
    return s->eval_res;
  switch (s->kind) {
  case SL_SCHEDULE_LINEAR:
    return linear_res(s, epoch);
  case SL_SCHEDULE_STEPS: {
    if (s->steps.n == 0)
      return s->max;
    int64_t res = s->steps.v[0].res;
    for (int i = 0; i < s->steps.n; i++)
      if ((uint64_t)s->steps.v[i].epoch <= epoch)
        res = s->steps.v[i].res;
    return (int)res;
  }
  case SL_SCHEDULE_CONSTANT:
  default:
    return s->max;
  }
}

int sl_schedule_max(const sl_schedule *s) {
  if (s->eval)
    return s->eval_res;
  if (s->kind == SL_SCHEDULE_STEPS && s->steps.n > 0) {
    int64_t m = 0;
    for (int i = 0; i < s->steps.n; i++)
      if (s->steps.v[i].res > m)
        m = s->steps.v[i].res;
    return (int)m;
  }
  if (s->kind == SL_SCHEDULE_LINEAR)
    return s->max > s->min ? s->max : s->min;
  return s->max;
}
