"""Packs an ImageFolder (class subfolders of images) into sluice shards with
a distributed engine, one shard per task, then trains-ready: the folder OUT
opens as one dataset (dataset.path = OUT).

  python3 examples/pack_parallel.py IMAGES OUT --engine ray --tasks 8
  python3 examples/pack_parallel.py IMAGES OUT --engine spark --tasks 8

Ray: ray.init() joins a running cluster (RAY_ADDRESS) or starts a local one;
Spark: the session's master (spark-submit --master ...). OUT must be a path
every worker sees (a shared file system). For one machine without an
engine, `sluice pack IMAGES OUT --shards N` does the same with threads."""

import argparse
import os

import sluice.parallel as par


def rows_of(images):
    """(class names, the rows: path, label, name) of an ImageFolder. The
    image bytes are read by the tasks, not by the driver."""
    classes = sorted(d for d in os.listdir(images)
                     if os.path.isdir(os.path.join(images, d)))
    rows = []
    for label, c in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(images, c))):
            rows.append({"path": os.path.join(images, c, f), "label": label,
                         "name": "%s/%s" % (c, f)})
    return classes, rows


def with_bytes(row):
    with open(row["path"], "rb") as f:
        return {"image": f.read(), "label": row["label"], "name": row["name"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("images")
    ap.add_argument("out")
    ap.add_argument("--engine", choices=["ray", "spark"], default="ray")
    ap.add_argument("--tasks", type=int, default=8)
    a = ap.parse_args()
    classes, rows = rows_of(a.images)
    if a.engine == "ray":
        import ray
        ray.init()
        ds = ray.data.from_items(rows, override_num_blocks=a.tasks)
        r = par.write_ray(ds.map(with_bytes), a.out, name="name",
                          classes=classes)
    else:
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.appName("sluice-pack").getOrCreate()
        df = spark.createDataFrame(
            [(r["path"], r["label"], r["name"]) for r in rows],
            ["path", "label", "name"]).repartition(a.tasks)
        df = df.rdd.map(lambda r: with_bytes(r.asDict())).toDF()
        r = par.write_spark(df, a.out, name="name", classes=classes)
    print("%s: %d shards, %d samples" % (a.out, r["shards"], r["samples"]))


if __name__ == "__main__":
    main()
