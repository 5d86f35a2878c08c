"""Packing a dataset into sluice shards in parallel on a distributed engine:
each task writes one shard with ``sluice.Writer``, named after the task so
that a retried task replaces only its own shard, then ``sluice.index`` makes
the folder one dataset (docs/SHARDS.md).

* ``write_shard(path, rows, ...)``: any engine, or a plain process pool.
* ``write_ray(dataset, folder, ...)``: a ``ray.data.Dataset`` through a
  Ray Data Datasink (one shard per write task).
* ``write_spark(df, folder, ...)``: a PySpark DataFrame, one shard per
  partition (``mapPartitionsWithIndex``).

Rows are mappings (a dict, a pandas row, a Spark Row's ``asDict()``) with the
image's encoded bytes (JPEG, PNG or WebP: what ``Writer.add_encoded`` takes)
under ``image``, an int class under ``label`` (or None), and optionally a
name and a list of float targets. The engines are imported only by the
function that uses them."""

import os

from . import _sluice

__all__ = ["write_shard", "write_ray", "write_spark", "shard_name"]


def shard_name(task, format="lmdb"):
    """The shard file of task number ``task``: ``part-00017.lmdb``."""
    return "part-%05d.%s" % (task, "h5" if format == "hdf5" else "lmdb")


def write_shard(path, rows, *, image="image", label="label", name=None,
                targets=None, target_width=0, classes=None, format=None,
                settings=None, keep_jpeg=False):
    """Writes ``rows`` as one shard at ``path`` (replacing an earlier one:
    a retried task's), committed atomically. ``classes``: the class names
    every shard shares (recommended: shards must agree on them). Returns
    the number of samples written."""
    w = _sluice.Writer(os.fspath(path), format=format,
                       target_width=target_width, keep_jpeg=keep_jpeg,
                       replace=True, settings=settings)
    try:
        n = 0
        for row in rows:
            lab = row[label] if label else None
            w.add_encoded(bytes(row[image]),
                          label=-1 if lab is None else int(lab),
                          targets=list(row[targets]) if targets else None,
                          name=str(row[name]) if name else None)
            n += 1
        for k, c in enumerate(classes or ()):
            w.set_class_name(k, c)
        w.commit()
        return n
    finally:
        w.close()


def _index(folder):
    from . import index
    return index(folder)


def write_ray(dataset, folder, **options):
    """Writes a ``ray.data.Dataset`` of rows as sluice shards in ``folder``
    (made if missing), one per Ray Data write task (``part-NNNNN.lmdb``
    after the task's index, so a retried task rewrites only its own), then
    indexes the folder. ``options``: as ``write_shard`` (column names,
    classes, format...). Returns ``sluice.index``'s report."""
    from ray.data import Datasink

    folder = os.path.abspath(os.fspath(folder))
    os.makedirs(folder, exist_ok=True)
    fmt = options.get("format") or "lmdb"

    class ShardSink(Datasink):
        def write(self, blocks, ctx):
            rows = (row for block in blocks
                    for row in block.to_pandas().to_dict("records"))
            return write_shard(os.path.join(folder, shard_name(ctx.task_idx,
                                                               fmt)),
                               rows, **options)

        def on_write_complete(self, result):
            pass

    dataset.write_datasink(ShardSink())
    return _index(folder)


def write_spark(df, folder, **options):
    """Writes a PySpark DataFrame as sluice shards in ``folder`` (a path
    every executor sees), one per partition (``part-NNNNN.lmdb`` after the
    partition's index: a retried task rewrites only its own), then indexes
    it on the driver. ``options``: as ``write_shard``. Returns
    ``sluice.index``'s report."""
    folder = os.path.abspath(os.fspath(folder))
    os.makedirs(folder, exist_ok=True)
    fmt = options.get("format") or "lmdb"

    def task(idx, rows):
        n = write_shard(os.path.join(folder, shard_name(idx, fmt)),
                        (r.asDict() for r in rows), **options)
        yield n

    df.rdd.mapPartitionsWithIndex(task).collect()
    return _index(folder)
