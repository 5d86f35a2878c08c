/* The restart-marker layout that lets a decoder skip to the crop.
 *
 * A baseline JPEG's entropy-coded data can only be read from the start:
 * Huffman codes have no byte boundaries and each block's DC value is coded
 * as a difference from the previous block's. A restart marker (RSTn, every
 * DRI MCUs) is a byte-aligned point after which the DC predictions start
 * again from zero. When the interval divides the MCUs of a row, every MCU
 * row starts a new interval and each row is cut into equal segments, so
 * the data of any rectangle of segments can be found by scanning for
 * markers (memchr speed) and decoded on its own.
 *
 * `sluice pack` rewrites JPEGs losslessly into this layout (same DCT
 * coefficients, hence the same pixels; codecs/jpeg_rewrite.h) and the
 * region decoder (codecs/jpeg_window.h) uses it, on any JPEG whose restart
 * interval divides its MCU rows or is a whole number of rows. */
#ifndef SLUICE_CODECS_JPEG_LAYOUT_H
#define SLUICE_CODECS_JPEG_LAYOUT_H

enum {
  /* Target segment width: narrower segments skip more of a row's data but
   * cost 2 marker bytes and up to 7 padding bits each (measured on 500x375
   * q90 4:2:0: 16 px segments +2.7% file size, 32 px +1.4%, 64 px +0.7%;
   * decode speed within 1% of each other). */
  SL_JPEG_SEGMENT_PX = 32
};

/* The restart interval, in MCUs, for a row of mcus_per_row MCUs each mcu_w
 * pixels wide: the largest divisor of mcus_per_row whose segment is at most
 * SL_JPEG_SEGMENT_PX wide (1 when one MCU is already wider). A divisor, so
 * that every MCU row starts a segment. */
static inline int sl_jpeg_restart_mcus(int mcus_per_row, int mcu_w) {
  int best = 1;
  for (int d = 2; d <= mcus_per_row && d * mcu_w <= SL_JPEG_SEGMENT_PX; d++)
    if (mcus_per_row % d == 0)
      best = d;
  return best;
}

#endif
