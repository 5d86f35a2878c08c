"""Adapters between bench/harness.py and sluice's own bench programs (built in
the Release build dir): which command measures what, and how to read its
output. Each program prints its measurements as lines

    RESULT {"case": ..., "res": R, "workers": W, "images_per_s": X, ...}

(one JSON object per line, after the word RESULT); anything else on stdout is
for people and ignored here. See parse notes at each adapter.

Also: the goals of issue 8, computed from the summary.
"""
import os
import statistics


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
    def __init__(self, build, images, lmdb, hdf5, batch, log):
        self.build, self.images, self.batch, self.log = build, images, batch, log
        self.datasets = [(k, p) for k, p in (("lmdb", lmdb), ("hdf5", hdf5)) if p and os.path.exists(p)]
        self.bench_decode = _exe(build, "bench_decode")
        self.bench_loader = _exe(build, "bench_loader")
        self.sluice = _exe(build, "sluice")

    def describe(self):
        return {"bench_decode": self.bench_decode, "bench_loader": self.bench_loader,
                "cli": self.sluice, "datasets": [k for k, _ in self.datasets],
                "io": self.io_backends()}

    def missing(self, what):
        """(message, is_error): a program whose source is in the tree but that
        was not built is an error; one not written yet is only a note."""
        prog = "bench_decode" if what == "decode" else "bench_loader"
        if not getattr(self, prog):
            src = os.path.join(os.path.dirname(os.path.abspath(__file__)), prog + ".c")
            if os.path.exists(src):
                return "%s did not build (bench/%s.c exists)" % (prog, prog), True
            return "%s is not in this tree yet (bench/%s.c)" % (prog, prog), False
        return "no packed dataset (sluice pack missing or failed, see above)", False

    # ------------------------------------------------------------ decode

    def decode_contenders(self, resolutions):
        """One contender per round: bench_decode runs the plain tjDecompress2
        decode and sluice's decode+augment at each resolution on the same
        images in one process, alternating them itself; the harness repeats it
        for its rounds."""
        if not self.bench_decode:
            return []
        cmd = [self.bench_decode, "--res", ",".join(map(str, resolutions)), self.images]
        return [{"name": "bench_decode", "cmd": cmd}]

    def summarize_decode(self, got, contenders):
        """Rows {case, res, images_per_s (median over rounds), ratio_vs_full}."""
        per = {}
        for run in got.get("bench_decode", []):
            if run is None:
                continue
            for rec in run.get("records", []):
                key = (rec.get("case"), rec.get("res"))
                per.setdefault(key, []).append(rec.get("images_per_s"))
        rows = []
        full = _median(per.get(("tj_full", None), []) or per.get(("tj_full", 0), []))
        for (case, res), xs in sorted(per.items(), key=lambda kv: (str(kv[0][0]), -(kv[0][1] or 0))):
            m = _median(xs)
            rows.append({"case": case, "res": res, "images_per_s": m, "n": len(xs),
                         "ratio_vs_full": (m / full) if (m and full and case != "tj_full") else None})
        return rows

    # ------------------------------------------------------------ loader

    def io_backends(self):
        return ["auto"]

    def loader_contenders(self, res, workers):
        if not self.bench_loader:
            return []
        out = []
        for kind, path in self.datasets:
            for io in self.io_backends():
                out.append({"name": "sluice_%s_%s" % (kind, io), "kind": "sluice",
                            "label": "sluice loader, %s, io=%s" % (kind.upper(), io),
                            "cmd": [self.bench_loader, path, "--res", str(res), "--workers",
                                    str(workers), "--batch", str(self.batch), "--io", io]})
        return out

    def drift_contender(self, res, workers, epochs):
        if not self.bench_loader or not self.datasets:
            return None
        kind, path = self.datasets[0]
        return {"name": "sluice_%s_drift" % kind,
                "cmd": [self.bench_loader, path, "--res", str(res), "--workers", str(workers),
                        "--batch", str(self.batch), "--epochs", str(epochs)]}

    def summarize_drift(self, run):
        """RSS per epoch from records {"epoch": e, "rss_kb": ...}; drift is
        (last - first epoch's end RSS) / first."""
        rss = [(r["epoch"], r["rss_kb"]) for r in run.get("records", []) if "rss_kb" in r and "epoch" in r]
        if len(rss) < 2:
            return {"error": "no per-epoch RSS lines", "peak_rss_mb": run.get("peak_rss_mb")}
        rss.sort()
        first, last = rss[0][1], rss[-1][1]
        return {"epochs": len(rss), "rss_kb": [v for _, v in rss], "first_kb": first, "last_kb": last,
                "drift": (last - first) / first if first else None,
                "peak_rss_mb": run.get("peak_rss_mb")}


# ---------------------------------------------------------------- goals

def _find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


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
                out.append({"goal": text, "workers": w, "figure": round(r["ratio"], 2),
                            "met": r["ratio"] >= target,
                            "note": "%s / %s, median of %d paired rounds" % (r["sluice"], vs, r["pairs"])})

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

    for row in summary.get("loader", []):
        if row["kind"] != "sluice" or row["images_per_s"] is None:
            continue
        single = _find(dec, case="sluice_aug", res=row["res"])
        if not single or not single.get("images_per_s"):
            continue
        eff = row["images_per_s"] / (row["workers"] * single["images_per_s"])
        out.append({"goal": "end to end >= 0.9 x workers x single-thread decode+augment (%s, %d, W=%d)"
                            % (row["contender"], row["res"], row["workers"]),
                    "figure": round(eff, 2), "met": eff >= 0.9,
                    "note": "%.0f img/s vs %d x %.0f" % (row["images_per_s"], row["workers"],
                                                         single["images_per_s"])})

    d = summary.get("drift")
    if d and d.get("drift") is not None:
        out.append({"goal": "RSS flat across epochs (drift < 1%)", "figure": round(100 * d["drift"], 2),
                    "met": abs(d["drift"]) < 0.01, "note": "%% over %d epochs" % d["epochs"]})
    else:
        out.append({"goal": "RSS flat across epochs (drift < 1%)", "figure": None, "met": None,
                    "note": (d or {}).get("error", "bench_loader did not run")})
    return out
