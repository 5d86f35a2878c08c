/* CRC-32C by ISA-L (formats/crc32c.h). */
#include "formats/crc32c.h"

#include <isa-l/crc.h>

uint32_t sl_crc32c(const uint8_t *p, size_t n) {
  return sl_crc32c_update(0, p, n);
}

uint32_t sl_crc32c_update(uint32_t crc, const uint8_t *p, size_t n) {
  /* crc32_iscsi neither inverts its seed nor its result, and takes an int
   * length: ~ in, ~ out, in runs of 1 GiB. */
  crc ^= 0xffffffffu;
  while (n > 0) {
    size_t run = n > (1u << 30) ? (1u << 30) : n;
    crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)run, crc);
    p += run;
    n -= run;
  }
  return crc ^ 0xffffffffu;
}
