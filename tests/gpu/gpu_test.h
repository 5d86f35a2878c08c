/* cmocka helpers shared by the GPU tests (include after <cmocka.h>). */
#ifndef SLUICE_TESTS_GPU_TEST_H
#define SLUICE_TESTS_GPU_TEST_H

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "loader/cuda/cuda_check.h"

/* Fails the test, naming the call, when a CUDA runtime call fails. */
#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      fail_msg("%s: %s", #call, cudaGetErrorString(e_));                       \
  } while (0)

/* Skips the test when device 0 cannot be used, unless SLUICE_REQUIRE_GPU=1
 * (a machine that has a GPU), where that fails instead. */
static inline void need_device(void) {
  sl_err err;
  sl_err_clear(&err);
  if (sl_cuda_probe(0, NULL, &err) == SL_OK)
    return;
  const char *req = getenv("SLUICE_REQUIRE_GPU");
  if (req && strcmp(req, "1") == 0)
    fail_msg("SLUICE_REQUIRE_GPU=1 but no usable device: %s", err.msg);
  print_message("skipped: %s\n", err.msg);
  skip();
}

#endif
