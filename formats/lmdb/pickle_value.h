/* A reader of the data-only subset of Python's pickle protocol (2 to 5),
 * for the LMDB values folder2lmdb.py (Efficient-PyTorch and its forks)
 * writes: pickle.dumps((jpeg_bytes, label)).
 *
 * It runs the pickle machine's data opcodes only: PROTO, FRAME, STOP;
 * bytes (SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8, and Python 2's
 * SHORT_BINSTRING, BINSTRING); str (SHORT_BINUNICODE, BINUNICODE,
 * BINUNICODE8); ints (BININT, BININT1, BININT2, LONG1 of up to 8 bytes);
 * NONE, NEWTRUE, NEWFALSE; tuples (EMPTY_TUPLE, TUPLE1-3, MARK + TUPLE);
 * lists (EMPTY_LIST, MARK + LIST, APPEND, APPENDS); the memo (MEMOIZE,
 * BINPUT, LONG_BINPUT, BINGET, LONG_BINGET). It never imports or calls
 * anything: any other opcode refuses the value, naming the opcode and its
 * offset; those that would load code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
 * INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) say so.
 *
 * Python 3 pickles bytes at protocol 2 as _codecs.encode(str, 'latin1')
 * (GLOBAL + REDUCE), whose bytes are not in the value as such (they are
 * UTF-8 of the latin-1 text): refused, saying to write protocol 3 or more.
 * Python 2's protocol-2 bytes (BINSTRING) are read.
 *
 * The record read: bytes alone (image, no label), or a tuple or list whose
 * item 0 is the image bytes and item 1, when present, an int label or
 * None; further items are ignored.
 *
 * Bounds: at most SL_PICKLE_MAX_OBJECTS objects, a stack of
 * SL_PICKLE_MAX_STACK, memo indices below SL_PICKLE_MAX_MEMO, all in fixed
 * arrays on the caller's stack (about 12 KiB); every length is checked
 * against the value's end; time linear in the value's size.
 *
 * Thread safety: pure functions of their arguments. */
#ifndef SLUICE_FORMATS_PICKLE_VALUE_H
#define SLUICE_FORMATS_PICKLE_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/lmdb/value_record.h"

#define SL_PICKLE_MAX_OBJECTS 256
#define SL_PICKLE_MAX_STACK 64
#define SL_PICKLE_MAX_MEMO 256

/* Parses value[0, n). Returns 0 and fills r, or -1 with a reason in why
 * (cap bytes) naming the opcode and its offset inside the value. Never
 * reads outside value[0, n). */
int sl_pickle_parse(const uint8_t *value, size_t n, sl_value_record *r,
                    char *why, size_t cap);

#endif
