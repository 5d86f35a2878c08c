/* The size of one element of each sl_dtype (include/sluice.h): the one
 * table the pipeline, the loader's buffers and the device convert share.
 * No state; any thread. */
#ifndef SLUICE_COMMON_DTYPE_H
#define SLUICE_COMMON_DTYPE_H

#include <stddef.h>

#include "sluice.h"

/* 1 (u8), 2 (fp16, bf16) or 4 (fp32, and any value outside the enum). */
static inline size_t sl_dtype_bytes(sl_dtype d) {
  switch (d) {
  case SL_DTYPE_U8:
    return 1;
  case SL_DTYPE_FP16:
  case SL_DTYPE_BF16:
    return 2;
  default:
    return 4;
  }
}

#endif
