"""MXNet RecordIO written byte for byte as mxnet writes it, for fixtures
(mxnet does not install here). Follows:

- dmlc-core src/recordio.cc, RecordIOWriter::WriteRecord (what
  mxnet.recordio.MXRecordIO.write calls through MXRecordIOWriterWriteRecord):
  each record is u32 magic 0xced7230a, u32 lrecord = cflag << 29 | length,
  the bytes, zero padding to 4. A payload holding the magic at a 4-byte
  aligned offset is split there into parts (cflag 1 first, 2 middle, 3
  last), the magic left out; every part but the last is a multiple of 4
  bytes long, so only the last is padded. Records of 2**29 bytes or more are
  refused.
- mxnet/recordio.py: IRHeader = namedtuple('HEADER', ['flag', 'label',
  'id', 'id2']), _IR_FORMAT = 'IfQQ' (native; '<IfQQ' on little-endian
  machines: 24 bytes, no padding); pack(header, s): a number label is
  written with flag 0, an array label as flag = its size, label 0, and the
  float32 labels after the header; MXIndexedRecordIO.write_idx(idx, buf)
  writes the record at tell() and the line '%s\\t%d\\n' % (str(key), pos)
  to the .idx file.
"""
import struct

MAGIC = 0xCED7230A
_IR_FORMAT = "<IfQQ"


def _lrec(cflag, length):
    return (cflag << 29) | length


def write_record(f, buf):
    """RecordIOWriter::WriteRecord."""
    assert len(buf) < (1 << 29)
    magic = struct.pack("<I", MAGIC)
    n = len(buf)
    lower_align = (n >> 2) << 2
    upper_align = ((n + 3) >> 2) << 2
    dptr = 0
    for i in range(0, lower_align, 4):
        if buf[i:i + 4] == magic:
            f.write(magic)
            f.write(struct.pack("<I", _lrec(1 if dptr == 0 else 2, i - dptr)))
            f.write(buf[dptr:i])
            dptr = i + 4
    f.write(magic)
    f.write(struct.pack("<I", _lrec(3 if dptr != 0 else 0, n - dptr)))
    f.write(buf[dptr:])
    f.write(b"\0" * (upper_align - n))


def pack(flag_label, s, id=0, id2=0):
    """mxnet.recordio.pack: label a number (flag 0) or a list of floats."""
    if isinstance(flag_label, (int, float)):
        return struct.pack(_IR_FORMAT, 0, float(flag_label), id, id2) + s
    labels = b"".join(struct.pack("<f", float(v)) for v in flag_label)
    return struct.pack(_IR_FORMAT, len(flag_label), 0.0, id, id2) + labels + s


class IndexedWriter:
    """mxnet.recordio.MXIndexedRecordIO opened with flag 'w'."""

    def __init__(self, idx_path, rec_path):
        self.rec = open(rec_path, "wb")
        self.idx = open(idx_path, "w") if idx_path else None

    def write_idx(self, key, buf):
        pos = self.rec.tell()
        write_record(self.rec, buf)
        if self.idx:
            self.idx.write("%s\t%d\n" % (str(key), pos))

    def close(self):
        self.rec.close()
        if self.idx:
            self.idx.close()
