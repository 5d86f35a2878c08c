/* Serialisations other tools put in LMDB values, named when a file read
 * as Caffe Datums (dataset.entries = caffe, or a first value that is neither
 * a pickle nor a msgpack array: e.g. msgpack maps) fails at its first
 * value: Python pickles and msgpack, whose (image, label) records sluice
 * reads as layouts pickle and msgpack (formats/lmdb/pickle_value.h,
 * formats/lmdb/msgpack_value.h). So such a file is named for what it is, not
 * reported as damaged Datums.
 *
 * Thread safety: pure functions. */
#ifndef SLUICE_FORMATS_VALUE_SNIFF_H
#define SLUICE_FORMATS_VALUE_SNIFF_H

#include <stddef.h>
#include <stdint.h>

/* Writes a name for the serialisation of the n bytes at p ("Python pickles
 * (protocol 4)", "msgpack maps", "msgpack arrays") into buf and returns 1,
 * or returns 0 when they are none of those. A pickle is told by its
 * protocol header (2 to 5) and its final STOP; msgpack by a map or array
 * that spans exactly the n bytes. */
int sl_value_sniff(const uint8_t *p, size_t n, char *buf, size_t cap);

#endif
