/* The data-only pickle reader (formats/lmdb/pickle_value.h). */
#include "formats/lmdb/pickle_value.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/endian.h"

/* One object the machine made. Containers list their items as a chain of
 * cells, so one object may sit in several containers (the memo hands out
 * the same object twice) and APPEND is O(1). */
typedef enum okind {
  O_BYTES,
  O_STR,
  O_INT,
  O_NONE,
  O_BOOL,
  O_TUPLE,
  O_LIST
} okind;

typedef struct pobj {
  uint8_t kind;
  size_t off, len;      /* O_BYTES, O_STR: value[off, +len) */
  int64_t i;            /* O_INT, O_BOOL */
  uint16_t first, last; /* O_TUPLE, O_LIST: cell numbers + 1; 0 = none */
} pobj;

typedef struct cell {
  uint16_t obj;
  uint16_t next; /* cell number + 1; 0 = none */
} cell;

typedef struct pvm {
  const uint8_t *p;
  size_t n, at, op_at; /* op_at: the current opcode's offset */
  pobj objs[SL_PICKLE_MAX_OBJECTS];
  cell cells[SL_PICKLE_MAX_OBJECTS];
  uint16_t stack[SL_PICKLE_MAX_STACK]; /* object numbers */
  uint16_t memo[SL_PICKLE_MAX_MEMO];   /* object number + 1; 0 = unset */
  uint16_t marks[SL_PICKLE_MAX_STACK]; /* stack depths */
  unsigned nobj, ncell, depth, nmark, memo_next;
  char *why;
  size_t cap;
} pvm;

static const struct {
  uint8_t op;
  const char *name;
} k_names[] = {
    {'(', "MARK"},
    {'.', "STOP"},
    {'0', "POP"},
    {'1', "POP_MARK"},
    {'2', "DUP"},
    {'F', "FLOAT"},
    {'I', "INT"},
    {'J', "BININT"},
    {'K', "BININT1"},
    {'L', "LONG"},
    {'M', "BININT2"},
    {'N', "NONE"},
    {'P', "PERSID"},
    {'Q', "BINPERSID"},
    {'R', "REDUCE"},
    {'S', "STRING"},
    {'T', "BINSTRING"},
    {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"},
    {'X', "BINUNICODE"},
    {'a', "APPEND"},
    {'b', "BUILD"},
    {'c', "GLOBAL"},
    {'d', "DICT"},
    {'}', "EMPTY_DICT"},
    {'e', "APPENDS"},
    {'g', "GET"},
    {'h', "BINGET"},
    {'i', "INST"},
    {'j', "LONG_BINGET"},
    {'l', "LIST"},
    {']', "EMPTY_LIST"},
    {'o', "OBJ"},
    {'p', "PUT"},
    {'q', "BINPUT"},
    {'r', "LONG_BINPUT"},
    {'s', "SETITEM"},
    {'t', "TUPLE"},
    {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"},
    {'G', "BINFLOAT"},
    {0x80, "PROTO"},
    {0x81, "NEWOBJ"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"},
    {0x8c, "SHORT_BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"},
    {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};

/* The name of pickle opcode op ("GLOBAL"), or NULL when op is none. */
static const char *sl_pickle_opname(uint8_t op) {
  for (size_t k = 0; k < sizeof k_names / sizeof k_names[0]; k++)
    if (k_names[k].op == op)
      return k_names[k].name;
  return NULL;
}

/* A reason naming the current opcode and its offset, then msg. */
static int fail(pvm *m, const char *msg) {
  uint8_t op = m->p[m->op_at];
  const char *name = sl_pickle_opname(op);
  snprintf(m->why, m->cap,
           "pickle opcode %s (0x%02x) at offset %zu of the value: %s",
           name ? name : "?", op, m->op_at, msg);
  return -1;
}

/* The k little-endian bytes of an argument at m->at, advancing. */
static int arg(pvm *m, int k, uint64_t *v) {
  if ((size_t)k > m->n - m->at)
    return fail(m, "its argument runs past the end of the value");
  *v = 0;
  for (int q = k - 1; q >= 0; q--)
    *v = *v << 8 | m->p[m->at + (size_t)q];
  m->at += (size_t)k;
  return 0;
}

static int push(pvm *m, unsigned obj) {
  if (m->depth >= SL_PICKLE_MAX_STACK)
    return fail(m, "the stack is deeper than 64 (not an (image, label) "
                   "record)");
  m->stack[m->depth++] = (uint16_t)obj;
  return 0;
}

/* A new object of kind k pushed on the stack; its number in *out. */
static int make(pvm *m, okind k, unsigned *out) {
  if (m->nobj >= SL_PICKLE_MAX_OBJECTS)
    return fail(m, "more than 256 objects (not an (image, label) record)");
  pobj *o = &m->objs[m->nobj];
  memset(o, 0, sizeof *o);
  o->kind = (uint8_t)k;
  *out = m->nobj++;
  return push(m, *out);
}

/* A length-prefixed run of k-byte length: its bytes become an object. */
static int blob(pvm *m, okind k, int len_bytes, bool sign) {
  uint64_t len;
  if (arg(m, len_bytes, &len) != 0)
    return -1;
  if (sign && (len & 0x80000000u))
    return fail(m, "a negative length");
  if (len > m->n - m->at) {
    char t[96];
    snprintf(t, sizeof t,
             "%" PRIu64 " bytes from offset %zu, past the end "
             "of the value (%zu bytes)",
             len, m->at, m->n);
    return fail(m, t);
  }
  unsigned o = 0;
  if (make(m, k, &o) != 0)
    return -1;
  m->objs[o].off = m->at;
  m->objs[o].len = (size_t)len;
  m->at += (size_t)len;
  return 0;
}

static int integer(pvm *m, int64_t v, okind k) {
  unsigned o = 0;
  if (make(m, k, &o) != 0)
    return -1;
  m->objs[o].i = v;
  return 0;
}

/* Appends object obj to container c. */
static int add_item(pvm *m, unsigned c, unsigned obj) {
  if (m->ncell >= SL_PICKLE_MAX_OBJECTS)
    return fail(m, "more than 256 items (not an (image, label) record)");
  unsigned k = m->ncell++;
  m->cells[k].obj = (uint16_t)obj;
  m->cells[k].next = 0;
  pobj *o = &m->objs[c];
  if (o->last)
    m->cells[o->last - 1].next = (uint16_t)(k + 1);
  else
    o->first = (uint16_t)(k + 1);
  o->last = (uint16_t)(k + 1);
  return 0;
}

/* The top `count` stack items become a new container of kind k. */
static int collect(pvm *m, okind k, unsigned count) {
  if (count > m->depth)
    return fail(m, "more items taken than the stack holds");
  unsigned items[SL_PICKLE_MAX_STACK];
  for (unsigned q = 0; q < count; q++)
    items[q] = m->stack[m->depth - count + q];
  m->depth -= count;
  unsigned c = 0;
  if (make(m, k, &c) != 0)
    return -1;
  for (unsigned q = 0; q < count; q++)
    if (add_item(m, c, items[q]) != 0)
      return -1;
  return 0;
}

static int pop_mark(pvm *m, unsigned *count) {
  if (m->nmark == 0)
    return fail(m, "no MARK before it");
  unsigned at = m->marks[--m->nmark];
  if (at > m->depth)
    return fail(m, "the stack is below its MARK");
  *count = m->depth - at;
  return 0;
}

static int memo_put(pvm *m, uint64_t idx) {
  if (m->depth == 0)
    return fail(m, "an empty stack");
  if (idx >= SL_PICKLE_MAX_MEMO)
    return fail(m, "memo index beyond 255 (not an (image, label) record)");
  m->memo[idx] = (uint16_t)(m->stack[m->depth - 1] + 1);
  return 0;
}

static int memo_get(pvm *m, uint64_t idx) {
  if (idx >= SL_PICKLE_MAX_MEMO || m->memo[idx] == 0)
    return fail(m, "a memo entry that was never set");
  return push(m, m->memo[idx] - 1u);
}

/* Python 3 writes bytes at protocol 2 as GLOBAL '_codecs\nencode\n'. */
static bool codecs_encode(const pvm *m) {
  static const char k_pat[] = "_codecs\nencode\n";
  size_t len = sizeof k_pat - 1;
  return m->n - m->at >= len && memcmp(m->p + m->at, k_pat, len) == 0;
}

/* What GLOBAL or INST ("module\nname\n" follows each) or STACK_GLOBAL
 * (module and name strs on the stack) would import, as "module.name" in t,
 * or "". */
static void what_loads(const pvm *m, uint8_t op, char *t, size_t cap) {
  size_t q = 0;
  if (op == 'c' || op == 'i') {
    int lines = 0;
    for (size_t at = m->at; at < m->n && q + 1 < cap && lines < 2; at++) {
      uint8_t c = m->p[at];
      if (c == '\n' && lines++ == 0)
        t[q++] = '.';
      else if (isprint(c))
        t[q++] = (char)c;
      else if (c != '\n')
        break;
    }
  } else if (op == 0x93 && m->depth >= 2) {
    const pobj *mod = &m->objs[m->stack[m->depth - 2]];
    const pobj *name = &m->objs[m->stack[m->depth - 1]];
    if (mod->kind == O_STR && name->kind == O_STR)
      for (int part = 0; part < 2; part++) {
        const pobj *o = part ? name : mod;
        if (part && q + 1 < cap)
          t[q++] = '.';
        for (size_t k = 0; k < o->len && q + 1 < cap; k++)
          t[q++] = isprint(m->p[o->off + k]) ? (char)m->p[o->off + k] : '?';
      }
  }
  t[q] = '\0';
}

/* The refusal of an opcode outside the data subset. */
static int refuse(pvm *m, uint8_t op) {
  static const uint8_t k_code[] = {'c',  0x93, 'R',  'b',  'i', 'o', 0x81,
                                   0x92, 0x82, 0x83, 0x84, 'P', 'Q'};
  if (op == 'c' && codecs_encode(m))
    return fail(m, "Python 3 wrote bytes at protocol 2 as "
                   "_codecs.encode(str, 'latin1'), a call sluice does not "
                   "make; write the values with pickle protocol 3 or more "
                   "(pickle.dumps(x, protocol=4))");
  if (!sl_pickle_opname(op))
    return fail(m, "not a pickle opcode (damaged value?)");
  for (size_t k = 0; k < sizeof k_code; k++)
    if (k_code[k] == op) {
      char t[64] = "";
      what_loads(m, op, t, sizeof t);
      char msg[256];
      snprintf(msg, sizeof msg,
               "it loads or calls Python code%s%s%s; sluice never runs code "
               "from a pickle and reads only bytes, ints, tuples and lists",
               t[0] ? " ('" : "", t, t[0] ? "')" : "");
      return fail(m, msg);
    }
  return fail(m, "not in the data subset sluice reads (bytes, ints, "
                 "None, tuples and lists: an (image bytes, label) record)");
}

static const char *kind_name(okind k) {
  static const char *const k_kinds[] = {"bytes", "str",   "int", "None",
                                        "bool",  "tuple", "list"};
  return k_kinds[k];
}

/* fail() with the kind of an object in a message of one %s. */
#define fail_kind(m, fmt, k)                                                   \
  (snprintf(kbuf, sizeof kbuf, fmt, kind_name((okind)(k))), fail(m, kbuf))

/* The record in the object STOP returned. */
static int record(pvm *m, unsigned top, sl_value_record *r) {
  char kbuf[96];
  const pobj *o = &m->objs[top];
  if (o->kind == O_BYTES) {
    r->image_off = o->off;
    r->image_len = o->len;
    return 0;
  }
  if (o->kind != O_TUPLE && o->kind != O_LIST)
    return fail_kind(m, "the pickle holds a %s, not (image bytes, label)",
                     o->kind);
  if (!o->first)
    return fail_kind(
        m, "the pickle holds an empty %s, not (image bytes, label)", o->kind);
  const cell *c0 = &m->cells[o->first - 1];
  const pobj *img = &m->objs[c0->obj];
  if (img->kind != O_BYTES)
    return fail_kind(m, "item 0 is a %s, not the image bytes", img->kind);
  r->image_off = img->off;
  r->image_len = img->len;
  if (c0->next) {
    const pobj *lab = &m->objs[m->cells[c0->next - 1].obj];
    if (lab->kind == O_INT) {
      r->has_label = true;
      r->label = lab->i;
    } else if (lab->kind != O_NONE) {
      return fail_kind(m, "item 1 is a %s, not an int label or None",
                       lab->kind);
    }
  }
  return 0;
}

static int step(pvm *m, uint8_t op, bool *stop, unsigned *top) {
  uint64_t v = 0;
  unsigned o = 0, count = 0;
  switch (op) {
  case 0x80: /* PROTO */
    if (arg(m, 1, &v) != 0)
      return -1;
    if (v > 5)
      return fail(m, "protocol above 5");
    return 0;
  case 0x95: /* FRAME: a length framing what follows; read through */
    if (arg(m, 8, &v) != 0)
      return -1;
    if (v > m->n - m->at)
      return fail(m, "a frame past the end of the value (truncated?)");
    return 0;
  case '.': /* STOP */
    if (m->depth == 0)
      return fail(m, "an empty stack");
    *top = m->stack[m->depth - 1];
    *stop = true;
    return 0;
  case 'C': /* SHORT_BINBYTES */
    return blob(m, O_BYTES, 1, false);
  case 'B': /* BINBYTES */
    return blob(m, O_BYTES, 4, false);
  case 0x8e: /* BINBYTES8 */
  case 0x96: /* BYTEARRAY8 */
    return blob(m, O_BYTES, 8, false);
  case 'U': /* SHORT_BINSTRING: Python 2's bytes */
    return blob(m, O_BYTES, 1, false);
  case 'T': /* BINSTRING: signed 4-byte length */
    return blob(m, O_BYTES, 4, true);
  case 0x8c: /* SHORT_BINUNICODE */
    return blob(m, O_STR, 1, false);
  case 'X': /* BINUNICODE */
    return blob(m, O_STR, 4, false);
  case 0x8d: /* BINUNICODE8 */
    return blob(m, O_STR, 8, false);
  case 'J': /* BININT */
    if (arg(m, 4, &v) != 0)
      return -1;
    return integer(m, (int32_t)(uint32_t)v, O_INT);
  case 'K': /* BININT1 */
    if (arg(m, 1, &v) != 0)
      return -1;
    return integer(m, (int64_t)v, O_INT);
  case 'M': /* BININT2 */
    if (arg(m, 2, &v) != 0)
      return -1;
    return integer(m, (int64_t)v, O_INT);
  case 0x8a: /* LONG1: n little-endian two's-complement bytes */
    if (arg(m, 1, &v) != 0)
      return -1;
    if (v > 8)
      return fail(m, "an int of more than 8 bytes");
    count = (unsigned)v;
    if (arg(m, (int)count, &v) != 0)
      return -1;
    if (count > 0 && count < 8 && (v >> (8 * count - 1)) & 1)
      v |= ~(uint64_t)0 << (8 * count); /* sign-extend */
    return integer(m, (int64_t)v, O_INT);
  case 'N':
    return make(m, O_NONE, &o);
  case 0x88: /* NEWTRUE */
  case 0x89: /* NEWFALSE */
    return integer(m, op == 0x88, O_BOOL);
  case ')': /* EMPTY_TUPLE */
    return make(m, O_TUPLE, &o);
  case ']': /* EMPTY_LIST */
    return make(m, O_LIST, &o);
  case 0x85: /* TUPLE1-3 */
  case 0x86:
  case 0x87:
    return collect(m, O_TUPLE, op - 0x84u);
  case '(': /* MARK */
    if (m->nmark >= SL_PICKLE_MAX_STACK)
      return fail(m, "marks nested deeper than 64");
    m->marks[m->nmark++] = (uint16_t)m->depth;
    return 0;
  case 't': /* TUPLE */
  case 'l': /* LIST */
    if (pop_mark(m, &count) != 0)
      return -1;
    return collect(m, op == 't' ? O_TUPLE : O_LIST, count);
  case 'a': /* APPEND */
    if (m->depth < 2 || m->objs[m->stack[m->depth - 2]].kind != O_LIST)
      return fail(m, "no list to append to");
    m->depth--;
    return add_item(m, m->stack[m->depth - 1], m->stack[m->depth]);
  case 'e': /* APPENDS */
    if (pop_mark(m, &count) != 0)
      return -1;
    if (m->depth < count + 1 ||
        m->objs[m->stack[m->depth - count - 1]].kind != O_LIST)
      return fail(m, "no list to append to");
    for (unsigned q = 0; q < count; q++)
      if (add_item(m, m->stack[m->depth - count - 1],
                   m->stack[m->depth - count + q]) != 0)
        return -1;
    m->depth -= count;
    return 0;
  case 0x94: /* MEMOIZE */
    return memo_put(m, m->memo_next++);
  case 'q': /* BINPUT */
  case 'r': /* LONG_BINPUT */
    if (arg(m, op == 'q' ? 1 : 4, &v) != 0)
      return -1;
    return memo_put(m, v);
  case 'h': /* BINGET */
  case 'j': /* LONG_BINGET */
    if (arg(m, op == 'h' ? 1 : 4, &v) != 0)
      return -1;
    return memo_get(m, v);
  default:
    return refuse(m, op);
  }
}

int sl_pickle_parse(const uint8_t *value, size_t n, sl_value_record *r,
                    char *why, size_t cap) {
  pvm m;
  m.p = value;
  m.n = n;
  m.at = m.op_at = 0;
  m.nobj = m.ncell = m.depth = m.nmark = m.memo_next = 0;
  memset(m.memo, 0, sizeof m.memo);
  m.why = why;
  m.cap = cap;
  memset(r, 0, sizeof *r);
  if (n < 2 || value[0] != 0x80) {
    snprintf(why, cap,
             "not a pickle of protocol 2 or more (no PROTO opcode "
             "at offset 0)");
    return -1;
  }
  bool stop = false;
  unsigned top = 0;
  while (!stop) {
    if (m.at >= n) {
      snprintf(why, cap,
               "pickle ends at offset %zu without STOP (truncated value?)", n);
      return -1;
    }
    m.op_at = m.at;
    uint8_t op = value[m.at++];
    if (step(&m, op, &stop, &top) != 0)
      return -1;
  }
  if (m.at != n) {
    snprintf(why, cap, "%zu bytes after the pickle's STOP at offset %zu",
             n - m.at, m.op_at);
    return -1;
  }
  return record(&m, top, r);
}
