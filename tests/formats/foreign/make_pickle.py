#!/usr/bin/python3
"""Writes the pickled and msgpack LMDB fixtures of test_pickle with py-lmdb,
exactly as the writers people use do:

- folder2lmdb.py (Efficient-PyTorch and its forks): keys
  u'{}'.format(idx).encode('ascii'), values pickle.dumps((raw_bytes, label))
  at the default protocol and at protocols 3, 4 and 5 (5 with a bytearray
  for odd samples: BYTEARRAY8), a list form, plus '__keys__' (a pickled list
  of the keys) and '__len__';
- tensorpack's LMDBSerializer: keys u'{:08}'.format(idx).encode('ascii'),
  values msgpack.dumps([jpeg, label], use_bin_type=True), with jpeg the
  file's bytes or, after msgpack_numpy.patch() as tensorpack does, the
  uint8 array np.asarray(bytearray(f.read()), dtype='uint8'); '__keys__'.

    make_pickle.py OUTDIR IMGDIR

IMGDIR holds the image files the C test encoded, listed in IMGDIR/list.txt;
sample i holds image i and label 10 + i. Python 3 cannot write Python 2's
protocol-2 bytes (BINSTRING), so pk2_py2.mdb is laid out as cPickle wrote
them, and checked here to load to the same (bytes, label) records.
"""
import os
import pickle
import struct
import sys

import lmdb
import msgpack
import msgpack_numpy
import numpy as np


class Evil:
    """What a hostile pickle carries: a call at load time."""

    def __reduce__(self):
        return (os.system, ("echo hi",))


def write(path, items):
    env = lmdb.open(path, map_size=64 << 20, subdir=False)
    with env.begin(write=True) as txn:
        for k, v in items:
            txn.put(k, v)
    env.close()


def folder2lmdb(files, dumps):
    """folder2lmdb.py's loop and its two metadata keys."""
    keys = [u'{}'.format(idx).encode('ascii') for idx in range(len(files))]
    items = [(k, dumps(idx, raw)) for idx, (k, raw) in enumerate(zip(keys, files))]
    items.append((b'__keys__', pickle.dumps(keys)))
    items.append((b'__len__', pickle.dumps(len(keys))))
    return items


def py2_pickle(raw, label):
    """cPickle.dumps((raw, label), 2) under Python 2 (raw a str)."""
    n = len(raw)
    s = (b'U' + bytes([n])) if n < 256 else (b'T' + struct.pack('<i', n))
    lab = (b'K' + bytes([label])) if label < 256 else (b'J' + struct.pack('<i', label))
    v = b'\x80\x02' + s + raw + b'q\x00' + lab + b'\x86q\x01.'
    assert pickle.loads(v, encoding='bytes') == (raw, label)
    return v


def three(name, first, bad):
    """Two good samples around one bad key (test_damaged)."""
    return [(b'00000000_ok', first), (b'00000001_bad_' + name.encode(), bad),
            (b'00000002_ok', first)]


def main():
    out, imgdir = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    names = open(os.path.join(imgdir, 'list.txt')).read().split()
    files = [open(os.path.join(imgdir, n), 'rb').read() for n in names]

    write(os.path.join(out, 'pk_default.mdb'),
          folder2lmdb(files, lambda i, raw: pickle.dumps((raw, 10 + i))))
    for proto in (3, 4, 5):
        def dumps(i, raw, proto=proto):
            if proto == 5 and i % 2:
                raw = bytearray(raw)
            return pickle.dumps((raw, 10 + i), protocol=proto)
        write(os.path.join(out, 'pk%d.mdb' % proto), folder2lmdb(files, dumps))
    write(os.path.join(out, 'pk_list.mdb'),
          folder2lmdb(files, lambda i, raw: pickle.dumps([raw, 10 + i], protocol=4)))
    write(os.path.join(out, 'pk2_py2.mdb'),
          folder2lmdb(files, lambda i, raw: py2_pickle(raw, 10 + i)))
    write(os.path.join(out, 'pk2_py3.mdb'),
          folder2lmdb(files, lambda i, raw: pickle.dumps((raw, 10 + i), protocol=2)))
    # More than ten samples: LMDB's key order ("0", "1", "10", "11", "2",
    # ...) is not the order of __keys__, which folder2lmdb's Dataset reads.
    many = [files[i % len(files)] for i in range(12)]
    write(os.path.join(out, 'pk_order.mdb'),
          folder2lmdb(many, lambda i, raw: pickle.dumps((raw, 10 + i))))
    with open(os.path.join(out, 'labels.txt'), 'w') as f:
        f.write(''.join('%d %d\n' % (i, 100 + i) for i in range(len(files))))

    # tensorpack: LMDBSerializer.save with dumps = msgpack (use_bin_type).
    def tensorpack(path, dp):
        keys = [u'{:08}'.format(idx).encode('ascii') for idx in range(len(files))]
        items = [(k, msgpack.dumps(dp(i, raw), use_bin_type=True))
                 for i, (k, raw) in enumerate(zip(keys, files))]
        items.append((b'__keys__', msgpack.dumps(keys, use_bin_type=True)))
        write(os.path.join(out, path), items)
    tensorpack('tp_bin.mdb', lambda i, raw: [raw, 10 + i])
    msgpack_numpy.patch()
    tensorpack('tp_numpy.mdb',
               lambda i, raw: [np.asarray(bytearray(raw), dtype='uint8'), 10 + i])

    # Code-loading pickles, refused at sample 1.
    ok = pickle.dumps((files[0], 0))
    write(os.path.join(out, 'evil_reduce2.mdb'),
          three('reduce2', ok, pickle.dumps((Evil(), 1), protocol=2)))
    write(os.path.join(out, 'evil_reduce4.mdb'),
          three('reduce4', ok, pickle.dumps((Evil(), 1), protocol=4)))
    write(os.path.join(out, 'evil_numpy.mdb'),
          three('numpy', ok, pickle.dumps((np.frombuffer(files[0], np.uint8), 1))))
    write(os.path.join(out, 'evil_label.mdb'),
          three('label', ok, pickle.dumps((files[0], np.int64(3)))))

    # Damaged values.
    good = pickle.dumps((files[0], 1), protocol=4)
    mgood = msgpack.dumps([files[0], 1], use_bin_type=True)
    bad = {
        'trunc': good[:len(good) - 10],
        'nostop': good[:-1],
        'huge': b'\x80\x04B\xff\xff\xff\x7f' + files[0][:50] + b'.',
        'opcode': b'\x80\x04\xfe.',
        'trailing': good + b'\x00\x00',
        'strlabel': pickle.dumps((files[0], 'seven'), protocol=4),
        'notimage': pickle.dumps((b'not an image at all', 1), protocol=4),
        'biglabel': pickle.dumps((files[0], 1 << 40), protocol=4),
    }
    for name, v in bad.items():
        write(os.path.join(out, 'bad_%s.mdb' % name), three(name, good, v))
    mbad = {
        'mtrunc': mgood[:len(mgood) - 10],
        'mint32': msgpack_numpy.dumps([np.zeros(4, np.int32), 1]),
        'm2d': msgpack_numpy.dumps([np.zeros((2, 2), np.uint8), 1]),
        'mfloat': msgpack.dumps([files[0], 1.5], use_bin_type=True),
    }
    for name, v in mbad.items():
        write(os.path.join(out, 'bad_%s.mdb' % name), three(name, mgood, v))


if __name__ == '__main__':
    main()
