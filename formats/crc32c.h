/* CRC-32C (Castagnoli), the checksum TFRecord frames its records with,
 * computed by Intel's ISA-L (Debian's libisal-dev: crc32_iscsi, with the
 * CPU's CRC32 instruction where it has one), and TFRecord's masking of it.
 *
 * Thread safety: pure functions. */
#ifndef SLUICE_FORMATS_CRC32C_H
#define SLUICE_FORMATS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of p[0, n) (crc32c("123456789") == 0xE3069283). */
uint32_t sl_crc32c(const uint8_t *p, size_t n);
/* The crc32c of bytes that follow those whose crc32c is crc (0 for none):
 * sl_crc32c(a + b) = sl_crc32c_update(sl_crc32c(a), b). */
uint32_t sl_crc32c_update(uint32_t crc, const uint8_t *p, size_t n);

/* TFRecord's masked CRC (tensorflow/core/lib/hash/crc32c.h: Mask): a CRC
 * of bytes that hold CRCs is rotated and offset so that it is not one. */
static inline uint32_t sl_crc32c_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

#endif
