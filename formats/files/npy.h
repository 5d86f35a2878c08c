/* NumPy .npy files, the one kind sluice reads: a float32 1-D array (a
 * WebDataset sample's targets). The header is parsed strictly: magic,
 * version 1.0/2.0/3.0, a dict of exactly 'descr': '<f4',
 * 'fortran_order': False/True and 'shape': (K,), and K × 4 bytes of data
 * after it, no more. No allocation; time linear in the header. */
#ifndef SLUICE_FORMATS_NPY_H
#define SLUICE_FORMATS_NPY_H

#include <stddef.h>
#include <stdint.h>

/* p[0..len) a .npy file: 0 with *k floats at p + *data, or -1 with a
 * reason in why. */
int sl_npy_f32_vector(const uint8_t *p, uint64_t len, uint64_t *k,
                      uint64_t *data, char *why, size_t cap);

#endif
