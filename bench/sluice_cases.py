"""Adapters between bench/harness.py and sluice's own programs (built in the
Release build dir): which command measures what, and how to read its output.
Programs print their measurements as lines

    RESULT {"case": ..., "res": R, "workers": W, "images_per_s": X, ...}

(one JSON object per line after the word RESULT); other lines are for people.

- decode: bench_decode, one thread, its own in-memory
  ImageNet-like JPEGs, (a) tjDecompress2 full decode of the original files
  vs (b) sluice decode+augment at 224/160/128 on the same images as `sluice
  pack` stores them (restart layout), and (s) on the original bytes,
  alternating rounds inside one process; images per thread-CPU-second and
  the median per-round ratios to (a).
- loader: bench/peers/sluice_loader.py drives libsluice's public API
  exactly as bench/peers/peer.py drives a peer (u8 NCHW, same crop/flip, one
  epoch timed after 3 batches), for each format and io backend; and the
  same images packed with resolution levels (`pack --levels 3/4,1/2`, io
  mmap, below 224 px), compared with the peers on the original files.
- efficiency and drift (goal "end to end >= 0.9 x W x single thread"):
  bench_loader, which measures the single-thread pipeline and
  the loader with 1 and 2 workers on the same dataset in one process, and
  sluice_loader.py over 5 epochs for the RSS per epoch.
- formats: bench_formats (pack throughput, index-open time), reported as is.
- foreign (issue 27): one row per foreign layout (FOREIGN below): sluice
  reading the file in place (sluice_loader.py on it, io mmap) against the
  reader that layout's users run (bench/peers/peer.py PEER --path FILE), the
  same images (written from the bench's folder by the layout's own client,
  bench/peers/foreign.py prepare), transforms, workers and batch.
- binding (goal "binding >= 0.95 x the C loader"): bench/bench_binding.py,
  the Python package against the C API in one process, alternating epochs,
  and the binding's RSS over 5 epochs.

Also: the goals (report.py's table), computed from the summary.
"""
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _exe(build, name):
    for sub in ("bench", "tools", ""):
        p = os.path.join(build, sub, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Cases:
    LEVELS = "3/4,1/2"  # run.sh packs lmdb_levels with these

    def __init__(self, build, images, lmdb, hdf5, batch, log, smoke=False, io_all_res=False,
                 lmdb_levels=None):
        self.build, self.images, self.batch, self.log = build, images, batch, log
        self.smoke, self.io_all_res = smoke, io_all_res
        self.datasets = [(k, p) for k, p in (("lmdb", lmdb), ("hdf5", hdf5)) if p and os.path.exists(p)]
        self.levels = lmdb_levels if lmdb_levels and os.path.exists(lmdb_levels) else None
        self.bench_decode = _exe(build, "bench_decode")
        self.bench_loader = _exe(build, "bench_loader")
        self.bench_formats = _exe(build, "bench_formats")
        self.sluice = _exe(build, "sluice")
        self.lib = next((os.path.join(build, n) for n in ("libsluice.so",)
                         if os.path.exists(os.path.join(build, n))), None)

    def describe(self):
        return {"bench_decode": self.bench_decode, "bench_loader": self.bench_loader,
                "bench_formats": self.bench_formats, "cli": self.sluice, "lib": self.lib,
                "datasets": [k for k, _ in self.datasets] + (["lmdb_levels"] if self.levels else []),
                "io": self.io_backends(224)}

    def missing(self, what):
        """(message, is_error): a program whose source is in the tree but that
        was not built is an error; one not written yet is only a note."""
        prog = {"decode": "bench_decode", "efficiency": "bench_loader", "formats": "bench_formats"}.get(what)
        if prog and not getattr(self, prog):
            if os.path.exists(os.path.join(HERE, prog + ".c")):
                return "%s did not build (bench/%s.c exists)" % (prog, prog), True
            return "%s is not in this tree yet (bench/%s.c)" % (prog, prog), False
        if what in ("loader", "drift") and not self.lib:
            return "libsluice.so was not built (shared library needed by sluice_loader.py)", True
        return "no packed dataset (sluice pack missing or failed, see above)", False

    # ------------------------------------------------------------ decode

    def decode_contenders(self, rounds):
        """bench_decode alternates (a) and (b) itself: one run, its rounds."""
        if not self.bench_decode:
            return []
        cmd = [self.bench_decode, "--rounds", str(rounds)]
        cmd += ["--images", "40" if self.smoke else "300"]
        return [{"name": "bench_decode", "cmd": cmd}]

    _DECODE_CASES = ("tj_full", "tj_full_packed", "sluice_aug", "sluice_stream")

    def parse_decode(self, stdout, records):
        """Rows {case, res, images_per_s, ratio_vs_full} from bench_decode's
        RESULT lines: tj_full (a), tj_full_packed (a'), sluice_aug (b, the
        goal's ratio) and sluice_stream (s) at each res."""
        rows = []
        for rec in records:
            case = rec.get("case")
            if case not in self._DECODE_CASES or "images_per_s" not in rec:
                continue
            res = rec.get("res")
            rows.append({"case": case, "res": int(res) if res else None,
                         "images_per_s": rec["images_per_s"], "ratio_vs_full": rec.get("ratio")})
        return rows

    # ------------------------------------------------------------ loader

    def io_backends(self, res):
        if self.smoke:
            return ["mmap"]
        if res == 224 or self.io_all_res:
            return ["mmap", "pread", "uring"]
        return ["mmap"]

    def loader_contenders(self, res, workers):
        """The first is the primary one the peers are compared with: LMDB with
        mmap (what io = auto picks for a dataset that fits in memory)."""
        if not self.lib:
            return []
        out = []
        for kind, path in self.datasets:
            for io in self.io_backends(res):
                out.append({"name": "sluice_%s_%s" % (kind, io), "kind": "sluice",
                            "label": "sluice loader, %s, io=%s" % (kind.upper(), io),
                            "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"),
                                    self.lib, path, "--res", str(res), "--workers", str(workers),
                                    "--batch", str(self.batch), "--io", io]})
        if self.levels and res < 224:
            out.append(self.levels_contender(res, workers))
        out.extend(self.planes_contenders(res, workers))
        return out

    def planes_contenders(self, res, workers):
        """augment.jpeg_planes (issue 24) against the RGBX path in the same
        rounds: the primary row (first dataset, io mmap) and the levels row
        with --planes, kind "sluice_planes", each with `pairs_with`."""
        if self.smoke or not self.datasets:
            return []
        kind, path = self.datasets[0]
        out = [{"name": "sluice_%s_planes_mmap" % kind, "kind": "sluice_planes",
                "label": "sluice loader, %s, io=mmap, jpeg_planes" % kind.upper(),
                "pairs_with": "sluice_%s_mmap" % kind,
                "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"),
                        self.lib, path, "--res", str(res), "--workers", str(workers),
                        "--batch", str(self.batch), "--io", "mmap", "--planes"]}]
        if self.levels and res < 224:
            lv = self.levels_contender(res, workers)
            out.append(dict(lv, name="sluice_lmdb_levels_planes_mmap", kind="sluice_planes",
                            label=lv["label"] + ", jpeg_planes", pairs_with=lv["name"],
                            cmd=lv["cmd"] + ["--planes"]))
        return out

    def baseline_contenders(self, res, workers, label):
        """The rows of a baseline build (bench/run.sh --baseline REV; this
        Cases made on its build dir and its own packs): its primary row
        (first dataset, io mmap) and its levels row below 224 px, named
        `sluice@REV_...` (label = "sluice@REV"), kind "baseline", each with
        `pairs_with`, the current build's row it is compared with. The
        current tree's sluice_loader.py drives the baseline's library, so
        both are timed by the same code."""
        if not self.lib:
            return []
        out = []
        rows = [c for c in self.loader_contenders(res, workers)
                if c["kind"] == "sluice_levels" or c["name"] == "sluice_%s_mmap" % (
                    self.datasets[0][0] if self.datasets else "")]
        for c in rows:
            out.append(dict(c, name="%s_%s" % (label, c["name"][len("sluice_"):]), kind="baseline",
                            label="%s: %s" % (label, c["label"]), pairs_with=c["name"]))
        return out

    def recipe_contenders(self, res, workers):
        """sluice's first dataset (LMDB, mmap) with each recipe of
        peers/sluice_loader.py --recipe: rrc, tv, timm."""
        if not self.lib or not self.datasets:
            return []
        kind, path = self.datasets[0]
        return [{"name": "sluice_%s" % rc, "kind": "sluice", "recipe": rc,
                 "label": "sluice, recipe %s" % rc,
                 "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"),
                         self.lib, path, "--res", str(res), "--workers", str(workers),
                         "--batch", str(self.batch), "--io", "mmap", "--recipe", rc]}
                for rc in RECIPES]

    def levels_contender(self, res, workers):
        """The LMDB packed with levels: a sluice row of its own (kind
        sluice_levels), never the primary one."""
        return {"name": "sluice_lmdb_levels_mmap", "kind": "sluice_levels",
                "label": "sluice loader, LMDB with levels %s, io=mmap" % self.LEVELS,
                "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"),
                        self.lib, self.levels, "--res", str(res), "--workers", str(workers),
                        "--batch", str(self.batch), "--io", "mmap"]}

    def drift_contender(self, res, workers, epochs):
        if not self.lib or not self.datasets:
            return None
        kind, path = self.datasets[0]
        return {"name": "sluice_%s_mmap_drift" % kind,
                "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"), self.lib, path,
                        "--res", str(res), "--workers", str(workers), "--batch", str(self.batch),
                        "--io", "mmap", "--epochs", str(epochs)]}

    def summarize_drift(self, run):
        """RSS at the end of each epoch; drift = (last - first) / first, first
        being the end of epoch 0 (a mapped dataset's pages are all in by
        then). Also the drift of RssAnon, the memory the loader allocated."""
        rss = sorted((r["epoch"], r["rss_kb"], r.get("anon_kb")) for r in run.get("records", [])
                     if r.get("case") == "rss" and r.get("rss_kb") is not None)
        if len(rss) < 2:
            return {"error": "no per-epoch RSS lines", "peak_rss_mb": run.get("peak_rss_mb")}
        first, last = rss[0][1], rss[-1][1]
        out = {"epochs": len(rss), "rss_kb": [v for _, v, _ in rss], "first_kb": first, "last_kb": last,
               "drift": (last - first) / first if first else None, "peak_rss_mb": run.get("peak_rss_mb")}
        if rss[0][2] and rss[-1][2] is not None:
            out["anon_kb"] = [a for _, _, a in rss]
            out["anon_drift"] = (rss[-1][2] - rss[0][2]) / rss[0][2]
        return out

    # ------------------------------------------------------------ efficiency

    def efficiency_contenders(self, resolutions):
        """bench_loader's own comparison, once per resolution, on the primary
        dataset: single-thread pipeline rate and the loader with 1 and 2
        workers (its config: fp16 output, the loader's default)."""
        if not self.bench_loader or not self.datasets:
            return []
        kind, path = self.datasets[0]
        out = []
        for res in resolutions:
            out.append({"name": "bench_loader_%d" % res, "res": res,
                        "cmd": [self.bench_loader, path, "--res", str(res), "--batch", str(self.batch),
                                "--epochs", "2" if self.smoke else "3"]})
        return out

    @staticmethod
    def parse_efficiency(records):
        single = next((r["images_per_s"] for r in records if r.get("case") == "pipeline_1t"), None)
        rows = []
        for r in records:
            if r.get("case") == "loader_vs_1t":
                rows.append({"res": r.get("res"), "workers": r.get("workers"),
                             "images_per_s": r.get("images_per_s"), "single_thread": single,
                             "efficiency": r.get("efficiency")})
        return rows

    # ------------------------------------------------------------ binding

    def binding_contender(self, res, workers):
        """The Python package (build/python) against the C loader on the
        primary dataset, with an interpreter that has NumPy (this one, or
        Debian's, which sees python3-numpy)."""
        pkg = os.path.join(self.build, "python")
        mod = os.path.join(pkg, "sluice")
        if not self.lib or not self.datasets or not os.path.isdir(mod) or \
                not any(f.startswith("_sluice") for f in os.listdir(mod)):
            return None
        py = next((p for p in (sys.executable, "/usr/bin/python3")
                   if os.path.exists(p) and os.system('"%s" -c "import numpy" 2>/dev/null' % p) == 0),
                  None)
        if py is None:
            return None
        kind, path = self.datasets[0]
        return {"name": "binding_%s" % kind,
                "env": {"PYTHONPATH": pkg},
                "cmd": [py, os.path.join(HERE, "bench_binding.py"), self.lib, path, "--res", str(res),
                        "--workers", str(workers), "--batch", str(self.batch),
                        "--pairs", "1" if self.smoke else "5",
                        "--rss-epochs", "2" if self.smoke else "5"]}

    @staticmethod
    def parse_binding(records):
        return next((r for r in records if r.get("case") == "binding_vs_c"), None)

    def formats_contender(self, workdir):
        if not self.bench_formats or self.smoke:
            return None
        cmd = [self.bench_formats, "--dir", workdir]
        if self.sluice:
            cmd += ["--bin", self.sluice]
        return {"name": "bench_formats", "cmd": cmd}


# ---------------------------------------------------------------- foreign

# One row per foreign layout: sluice reading the file in place against the
# reader its users run today (a peer of bench/peers/peer.py, whose Dataset is
# in bench/peers/foreign.py's LAYOUTS with the layout's writer). To add a
# layout: its writer and Dataset in foreign.py, an entry here.
FOREIGN = [
    {"layout": "pickle", "peer": "torch_folder2lmdb",
     "label": "folder2lmdb LMDB (pickled (jpeg, label))",
     "peer_label": "folder2lmdb's ImageFolderLMDB: py-lmdb + pickle.loads + PIL, DataLoader"},
    {"layout": "msgpack", "peer": "torch_msgpack_lmdb",
     "label": "tensorpack LMDB (msgpack [jpeg, label])",
     "peer_label": "torch Dataset: py-lmdb + msgpack.loads + PIL, DataLoader"},
    {"layout": "tfrecord", "peer": "torch_tfrecord",
     "label": "TFRecord (tf.train.Example, image/encoded)",
     "peer_label": "tfrecord package's TFRecordDataset + PIL, DataLoader"},
    {"layout": "webdataset", "peer": "wds_webloader",
     "label": "WebDataset tar shards (jpg, cls)",
     "peer_label": "webdataset's WebDataset + decode('pil'), WebLoader"},
]
FOREIGN_BY_LAYOUT = {f["layout"]: f for f in FOREIGN}


def read_manifest(path):
    """{layout: path} from foreign.py prepare's manifest (`LAYOUT PATH` lines),
    in FOREIGN's order; unknown layouts are ignored."""
    got = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                layout, _, p = line.strip().partition(" ")
                if layout in FOREIGN_BY_LAYOUT and p:
                    got[layout] = p
    return {f["layout"]: got[f["layout"]] for f in FOREIGN if f["layout"] in got}


def foreign_contenders(lib, layout, path, peer_python, res, workers, batch):
    """[sluice in place, the peer] for one layout (the peer left out when
    peer_python is None: its packages are missing)."""
    f = FOREIGN_BY_LAYOUT[layout]
    out = [{"name": "sluice_%s" % layout, "kind": "sluice", "layout": layout,
            "label": "sluice, %s in place, io=mmap" % f["label"],
            "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"), lib, path,
                    "--res", str(res), "--workers", str(workers), "--batch", str(batch), "--io", "mmap"]}]
    if peer_python:
        out.append({"name": f["peer"], "kind": "peer", "layout": layout, "label": f["peer_label"],
                    "cmd": [peer_python, os.path.join(HERE, "peers", "peer.py"), f["peer"], "--path", path,
                            "--res", str(res), "--workers", str(workers), "--batch", str(batch)]})
    return out


def foreign_summary(layout, res, workers, got):
    """One row: both loaders' median images/s and per core (÷ workers), per
    CPU-second, and sluice ÷ peer as the median of the paired rounds."""
    f = FOREIGN_BY_LAYOUT[layout]
    s = got.get("sluice_%s" % layout, [])
    p = got.get(f["peer"], [])

    def med(key, xs):
        v = _median([x and x.get(key) for x in xs])
        return v

    def paired(key):
        rs = [a[key] / b[key] for a, b in zip(s, p) if a and b and a.get(key) and b.get(key)]
        return (statistics.median(rs), len(rs)) if rs else (None, 0)

    ratio, n = paired("rate")
    cpu_ratio, _ = paired("cpu_rate")
    rate_s, rate_p = med("rate", s), med("rate", p)
    return {"layout": layout, "label": f["label"], "peer": f["peer"], "peer_label": f["peer_label"],
            "res": res, "workers": workers,
            "sluice_images_per_s": rate_s, "peer_images_per_s": rate_p,
            "sluice_per_core": rate_s / workers if rate_s else None,
            "peer_per_core": rate_p / workers if rate_p else None,
            "sluice_per_cpu_s": med("cpu_rate", s), "peer_per_cpu_s": med("cpu_rate", p),
            "ratio": ratio, "cpu_ratio": cpu_ratio, "pairs": n}


# ---------------------------------------------------------------- goals

def _find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def baseline_decode_rows(current, baseline):
    """bench_decode's rows of the current build beside the baseline build's
    (same case and res): {case, res, images_per_s, baseline_images_per_s,
    speedup, speedup_vs_full}; speedup = current / baseline, both per
    thread-CPU-second of one process each, run back to back;
    speedup_vs_full = the ratio of their ratios to (a), tjDecompress2's full
    decode timed in the same process (the same libjpeg-turbo code in both),
    which cancels a change of machine speed between the two processes."""
    out = []
    for row in current:
        b = _find(baseline, case=row["case"], res=row["res"])
        cur, old = row.get("images_per_s"), b and b.get("images_per_s")
        rc, rb = row.get("ratio_vs_full"), b and b.get("ratio_vs_full")
        out.append({"case": row["case"], "res": row["res"], "images_per_s": cur,
                    "baseline_images_per_s": old, "speedup": cur / old if cur and old else None,
                    "speedup_vs_full": rc / rb if rc and rb and row["case"] != "tj_full_packed" else None})
    return out


# The recipe rows (bench/peers/peer.py --recipe, sluice_loader.py --recipe).
RECIPES = ("rrc", "tv", "timm")


DETECT_CROPS = ("rrc", "iou_crop")


def detection_contenders(lib, det_lmdb, res, workers, batch):
    """sluice on the detection set (bench/det_data.py) with each crop of
    peers/sluice_loader.py --detect, boxes moved into the batches."""
    if not lib or not det_lmdb or not os.path.exists(det_lmdb):
        return []
    return [{"name": "sluice_det_%s" % crop, "kind": "sluice", "crop": crop,
             "cmd": [sys.executable, os.path.join(HERE, "peers", "sluice_loader.py"), lib, det_lmdb,
                     "--res", str(res), "--workers", str(workers), "--batch", str(batch),
                     "--io", "mmap", "--detect", crop]}
            for crop in DETECT_CROPS]


def detection_summary(got_rates, res, workers):
    """{res, workers, rows: [{contender, images_per_s, per_worker}],
    ratios: [{crop, vs, ratio}]}: medians, and sluice ÷ each peer with the
    same crop (per run, paired)."""
    import statistics
    out = {"res": res, "workers": workers, "rows": [], "ratios": []}
    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None
    for name, rates in got_rates.items():
        m = med(rates)
        out["rows"].append({"contender": name, "images_per_s": m,
                            "per_worker": m / workers if m else None})
    for crop in DETECT_CROPS:
        s = got_rates.get("sluice_det_%s" % crop)
        if s is None:
            continue
        for name, rates in got_rates.items():
            if name.startswith("sluice_") or not name.endswith("_det_" + crop):
                continue
            rs = [x / y for x, y in zip(s, rates) if x is not None and y]
            out["ratios"].append({"crop": crop, "vs": name[:-len("_det_" + crop)],
                                  "ratio": statistics.median(rs) if rs else None,
                                  "pairs": len(rs)})
    return out


def recipe_summary(got_rates, res, workers):
    """{recipe: {sluice, peers: {peer: rate}}} medians, the per-round paired
    ratios sluice / peer for each recipe, and sluice's cost of each recipe
    against its own rrc (rrc rate / recipe rate, paired)."""
    out = {"res": res, "workers": workers, "rows": [], "ratios": [], "cost": []}
    import statistics
    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None
    def paired(a, b):
        rs = [x / y for x, y in zip(a, b) if x is not None and y]
        return (statistics.median(rs), len(rs)) if rs else (None, 0)
    for name, rates in got_rates.items():
        out["rows"].append({"contender": name, "images_per_s": med(rates),
                            "per_worker": med(rates) / workers if med(rates) else None})
    for rc in RECIPES:
        s = got_rates.get("sluice_%s" % rc)
        if s is None:
            continue
        for name, rates in got_rates.items():
            if name.startswith("sluice_") or not name.endswith("_" + rc):
                continue
            r, n = paired(s, rates)
            out["ratios"].append({"recipe": rc, "vs": name[:-len(rc) - 1], "ratio": r, "pairs": n})
        if rc != "rrc" and "sluice_rrc" in got_rates:
            r, n = paired(got_rates["sluice_rrc"], s)
            out["cost"].append({"recipe": rc, "cost": r, "pairs": n})
    return out


def goals(summary, workers):
    """List of {goal, figure, met (True/False/None when not measured)}."""
    out = []
    ratios = summary.get("ratios", [])

    def ratio_goal(vs, res, target, text):
        for w in workers:
            r = _find(ratios, vs=vs, res=res, workers=w)
            if r is None or r["ratio"] is None:
                out.append({"goal": text, "workers": w, "figure": None, "met": None,
                            "note": "%s or the sluice loader did not run" % vs})
            else:
                cpu = r.get("cpu_ratio")
                out.append({"goal": text, "workers": w, "figure": round(r["ratio"], 2),
                            "met": r["ratio"] >= target,
                            "note": "%s / %s, median of %d paired rounds%s" % (
                                r["sluice"], vs, r["pairs"],
                                "; per CPU-second %.2f×" % cpu if cpu else "")})

    rec = summary.get("recipes") or {}
    for rc, vs, target in (("tv", "torch_pil", 5.0),):
        r = next((x for x in rec.get("ratios", []) if x["recipe"] == rc and x["vs"] == vs), None)
        text = "recipe %s: sluice per core >= %gx %s doing the same at 224" % (rc, target, vs)
        out.append({"goal": text, "workers": rec.get("workers"), "figure": r and r["ratio"] and round(r["ratio"], 2),
                    "met": (r["ratio"] >= target) if r and r["ratio"] else None,
                    "note": "median of %d paired rounds" % r["pairs"] if r and r["ratio"] else
                            "the recipe rows did not run"})
    for rc in ("tv",):
        c = next((x for x in rec.get("cost", []) if x["recipe"] == rc), None)
        out.append({"goal": "recipe %s costs <= 1.35x sluice's rrc time" % rc, "workers": rec.get("workers"),
                    "figure": c and c["cost"] and round(c["cost"], 2),
                    "met": (c["cost"] <= 1.35) if c and c["cost"] else None,
                    "note": "rrc rate / recipe rate, median of %d paired rounds" % c["pairs"]
                            if c and c["cost"] else "the recipe rows did not run"})
    ratio_goal("torch_pil", 224, 2.0, "sluice per core >= 2x torchvision DataLoader per worker at 224")
    ratio_goal("torch_pil", 128, 3.0, "sluice per core >= 3x torchvision DataLoader per worker at 128")
    for vs in ("dali_cpu", "ffcv"):
        for res in (224, 160, 128):
            ratio_goal(vs, res, 1.0, "sluice ahead of %s at %d" % (vs, res))

    dec = summary.get("decode", [])
    for res, target in ((224, 1.2), (128, 2.0)):
        row = _find(dec, case="sluice_aug", res=res)
        fig = row and row.get("ratio_vs_full")
        out.append({"goal": "sluice decode+augment >= %.1fx plain full decode at %d" % (target, res),
                    "figure": round(fig, 2) if fig else None, "met": (fig >= target) if fig else None,
                    "note": "bench_decode, single thread" if fig else "bench_decode did not run"})

    b = summary.get("binding")
    if b:
        out.append({"goal": "Python binding >= 0.95 x the C loader (res %s, %s workers)"
                            % (b.get("res"), b.get("workers")),
                    "figure": b.get("ratio_median"), "met": b["ratio_median"] >= 0.95,
                    "note": "bench_binding.py: median of %s paired epochs, same process; RSS over "
                            "epochs %s kB" % (b.get("pairs"), b.get("binding_rss_kb"))})

    eff = summary.get("efficiency", [])
    if eff:
        for row in eff:
            if row.get("efficiency") is None:
                continue
            out.append({"goal": "end to end >= 0.9 x workers x single-thread decode+augment (fp16, res %s)"
                                % row["res"], "workers": row["workers"],
                        "figure": round(row["efficiency"], 2), "met": row["efficiency"] >= 0.9,
                        "note": "bench_loader: %.0f img/s vs %d x %.0f, same process and dataset"
                                % (row["images_per_s"], row["workers"], row["single_thread"] or 0)})
    # The same goal for the u8 loader runs compared with the peers (primary
    # rows): wall-clock loader rate against bench_decode's single-thread
    # rate per CPU-second, which a loaded machine cannot lower (conservative).
    primaries = {}
    for row in summary.get("loader", []):
        if row["kind"] == "sluice":
            primaries.setdefault((row["res"], row["workers"]), row)
    if primaries:
        for row in primaries.values():
            if row["images_per_s"] is None:
                continue
            single = _find(dec, case="sluice_aug", res=row["res"])
            if not single or not single.get("images_per_s"):
                continue
            e = row["images_per_s"] / (row["workers"] * single["images_per_s"])
            out.append({"goal": "end to end >= 0.9 x workers x single-thread decode+augment (u8, res %d)"
                                % row["res"], "workers": row["workers"],
                        "figure": round(e, 2), "met": e >= 0.9,
                        "note": "%s %.0f img/s vs %d x %.0f (bench_decode, per CPU-second)"
                                % (row["contender"], row["images_per_s"], row["workers"],
                                   single["images_per_s"])})

    d = summary.get("drift")
    if d and d.get("drift") is not None:
        out.append({"goal": "RSS flat across epochs (drift < 1%)", "figure": round(100 * d["drift"], 2),
                    "met": abs(d["drift"]) < 0.01,
                    "note": "VmRSS, end of epoch 0 to end of epoch %d%s" % (
                        d["epochs"] - 1, "; RssAnon %.2f%%" % (100 * d["anon_drift"])
                        if d.get("anon_drift") is not None else "")})
    else:
        out.append({"goal": "RSS flat across epochs (drift < 1%)", "figure": None, "met": None,
                    "note": (d or {}).get("error", "the 5-epoch run did not run")})
    import remote_rows  # issue 38's goals, from the remote rows where they ran

    out += remote_rows.remote_goals(summary)
    return out
