#!/usr/bin/env python3
"""Runs every benchmark comparison of one bench/run.sh call and writes the raw
and summarised results as JSON. Standard library only (the peers run in their
own interpreter, bench/venv's); bench/report.py turns the JSON into tables,
plots and BENCHMARKS.md.

Method (why the numbers can be trusted on a shared machine):
- Every contender runs in its own process, one at a time, under the same
  environment (MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ fixed, `nice`).
- Contenders of one comparison run in rounds, the order reversed every other
  round (A B C, C B A, ...), so a slow spell on the machine hits all alike.
  We report medians over rounds, and ratios as the median of the per-round
  ratios (paired), never one-off absolute times.
- Memory: the process tree is sampled every 50 ms; we keep the peak of the
  summed PSS (shared pages split fairly between a loader and its worker
  processes) and of the summed RSS, and the main process's ru_maxrss.
"""
import argparse
import datetime
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import sluice_cases  # noqa: E402  (the adapters for sluice's own bench programs)
sys.path.insert(0, os.path.join(HERE, "peers"))
from cputime import _children  # noqa: E402  (one walk of a process tree)

PEERS = ["torch_pil", "torch_tvio", "dali_cpu", "ffcv", "spdl"]
PEER_LABEL = {
    "torch_pil": "PyTorch DataLoader + torchvision (PIL decode)",
    "torch_tvio": "PyTorch DataLoader + torchvision.io.decode_jpeg",
    "dali_cpu": "DALI CPU pipeline (decoders.image_random_crop)",
    "ffcv": "FFCV Loader (.beton)",
    "spdl": "SPDL spdl.io.load_image (FFmpeg crop/scale/hflip filter, threads)",
}
# Which install-status entries a peer needs (bench/venv/peer-status/<name>).
PEER_NEEDS = {"torch_pil": ["torch", "torchvision", "pillow"], "torch_tvio": ["torch", "torchvision"],
              "dali_cpu": ["dali"], "ffcv": ["ffcv", "torch", "torchvision"], "spdl": ["spdl", "numpy"]}
# The sections of one run, in the order they run (--rows picks some).
SECTIONS = ["decode", "loader", "recipes", "detection", "drift", "efficiency", "binding", "formats", "foreign",
            "remote"]
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "16777216", "MALLOC_TRIM_THRESHOLD_": "134217728"}


# ---------------------------------------------------------------- processes



def _mem_kb(pid):
    """(rss_kb, pss_kb, anon_kb) of one process; zeros when it is gone."""
    rss = pss = anon = 0
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Anonymous:"):
                    anon = int(line.split()[1])
    except OSError:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = pss = int(line.split()[1])
                    elif line.startswith("RssAnon:"):
                        anon = int(line.split()[1])
        except OSError:
            pass
    return rss, pss, anon


class TreeSampler(threading.Thread):
    """Peak summed RSS, PSS and anonymous memory of a process and all its
    descendants (anonymous: what the processes allocated, without the page
    cache of files they map, such as a mapped dataset)."""

    def __init__(self, pid, period=0.05):
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.peak_rss = self.peak_pss = self.peak_anon = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            pids, todo = [], [self.pid]
            while todo:
                p = todo.pop()
                pids.append(p)
                todo += _children(p)
            rss = pss = anon = 0
            for p in pids:
                r, s, a = _mem_kb(p)
                rss += r
                pss += s
                anon += a
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_anon = max(self.peak_anon, anon)
            self.stop.wait(self.period)


def run_process(cmd, env, timeout, log):
    """Runs cmd; returns a dict with rc, stdout, stderr tail, wall seconds,
    memory peaks (MB) and the parsed RESULT records."""
    full_env = dict(os.environ)
    full_env.update(env)
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(["nice", "-n", "5"] + cmd, stdout=out, stderr=err, env=full_env)
        sampler = TreeSampler(p.pid)
        sampler.start()
        rc, maxrss_kb, timed_out = None, 0, False
        while rc is None:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                rc = os.waitstatus_to_exitcode(status)
                maxrss_kb = ru.ru_maxrss
                break
            if time.perf_counter() - t0 > timeout:
                p.kill()
                timed_out = True
            time.sleep(0.02)
        p.returncode = rc
        sampler.stop.set()
        sampler.join()
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    records = []
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            try:
                records.append(json.loads(line[7:]))
            except ValueError:
                pass
    res = {"cmd": " ".join(cmd), "rc": rc, "timed_out": timed_out, "wall_s": round(wall, 3),
           "loadavg": round(load, 2),
           "peak_rss_mb": round(sampler.peak_rss / 1024, 1),
           "peak_pss_mb": round(sampler.peak_pss / 1024, 1),
           "peak_anon_mb": round(sampler.peak_anon / 1024, 1),
           "maxrss_mb": round(maxrss_kb / 1024, 1), "stdout": stdout,
           "stderr_tail": "\n".join(stderr.splitlines()[-15:]), "records": records}
    if rc != 0:
        log("  FAILED rc=%s%s: %s\n%s" % (rc, " (timeout)" if timed_out else "", res["cmd"],
                                           res["stderr_tail"]))
    return res


# ---------------------------------------------------------------- machine

def machine_info():
    info = {"host": socket.gethostname(), "kernel": platform.release(), "cpus": os.cpu_count(),
            "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            info["cpu"] = m.group(1).strip() if m else "?"
        with open("/proc/meminfo") as f:
            info["mem_gb"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    info["glibc"] = platform.libc_ver()[1]
    info["loadavg_start"] = os.getloadavg()[0]
    try:
        info["git"] = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                                     capture_output=True, text=True).stdout.strip()
    except OSError:
        info["git"] = ""
    info["git"] = info["git"] or os.environ.get("SLUICE_BENCH_REV", "?")
    return info


def peer_status(venv):
    """{peer: {"status": "ok", "version": ...} | {"status": "not installed", "error": ...}}"""
    sdir = os.path.join(venv, "peer-status")
    entries = {}
    if os.path.isdir(sdir):
        for name in os.listdir(sdir):
            with open(os.path.join(sdir, name)) as f:
                lines = f.read().splitlines()
            entries[name] = (lines[0] if lines else "fail", "\n".join(lines[1:]))
    out = {}
    debian = entries.get("torch-debian", ("missing", ""))
    for peer in PEERS:
        missing = []
        if peer.startswith("torch") and debian[0] == "ok" and entries.get("torch", ("",))[0] != "ok":
            out[peer] = {"status": "ok", "version": debian[1].strip(), "python": "/usr/bin/python3"}
            continue
        for need in PEER_NEEDS[peer]:
            st, msg = entries.get(need, ("missing", "bench/setup_peers.sh has not tried it"))
            if st != "ok":
                missing.append("%s: %s" % (need, msg.strip()[-1500:] or st))
        if missing:
            out[peer] = {"status": "not installed", "error": "\n".join(missing)}
        else:
            main = PEER_NEEDS[peer][0]
            out[peer] = {"status": "ok", "version": entries[main][1].strip()}
    return out


# ---------------------------------------------------------------- comparisons

def rounds_of(contenders, rounds, run, log):
    """Runs the contenders `rounds` times, alternating the order; returns
    {name: [run result or None per round]}."""
    got = {c["name"]: [] for c in contenders}
    for r in range(rounds):
        order = contenders if r % 2 == 0 else list(reversed(contenders))
        for c in order:
            log("  round %d/%d  %s" % (r + 1, rounds, c["name"]))
            got[c["name"]].append(run(c, r))
    return got


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def paired_ratio(a, b):
    """Median over rounds of a[i]/b[i] (both present)."""
    rs = [x / y for x, y in zip(a, b) if x is not None and y]
    return (statistics.median(rs), len(rs)) if rs else (None, 0)


def module_check(python, modules):
    """None when `python` imports every module, else the error's last line."""
    if not python or not os.path.exists(python):
        return "no interpreter %s" % python
    r = subprocess.run([python, "-c", "import " + ", ".join(modules)], capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["rc %d" % r.returncode])[-1]


def run_foreign(args, sc, res, workers, env, vpy, status, record, result, log):
    """The foreign-layout rows: for each layout of the manifest and each
    worker count, sluice in place against the layout's peer (run with the
    torch_pil peer's interpreter, when that one also imports the layout's
    client modules; otherwise sluice's row runs alone, with a note)."""
    import foreign  # bench/peers: the layouts' writers, readers and client modules

    layouts = sluice_cases.read_manifest(args.foreign_manifest)
    if not layouts:
        result["notes"].append("foreign: no foreign-layout file was prepared (see the prepare notes)")
        return []
    if not sc.lib:
        result["errors"].append("foreign: libsluice.so was not built")
        return []
    out = []
    for layout, path in layouts.items():
        peer_py = None
        if status.get("torch_pil", {}).get("status") == "ok":
            py = status["torch_pil"].get("python", vpy)
            why = module_check(py, ["torch", "torchvision", "PIL"] + foreign.LAYOUTS[layout]["modules"])
            if why is None:
                peer_py = py
            else:
                result["notes"].append("foreign %s: peer %s not run: %s: %s" % (
                    layout, sluice_cases.FOREIGN_BY_LAYOUT[layout]["peer"], py, why))
        else:
            result["notes"].append("foreign %s: peer not run: torch/torchvision not installed" % layout)
        for w in workers:
            cont = sluice_cases.foreign_contenders(sc.lib, layout, path, peer_py, res, w, args.batch)
            log("foreign %s res=%d workers=%d: %s" % (layout, res, w, ", ".join(c["name"] for c in cont)))

            def one(c, rnd, w=w):
                e = record("foreign", c["name"], rnd, res, w, run_process(c["cmd"], env, args.timeout, log))
                rec = next((x for x in e["records"] if "images_per_s" in x), None)
                if rec is None:
                    return None
                return {"rate": float(rec["images_per_s"]), "cpu_rate": rec.get("images_per_cpu_s"),
                        "pss": e["peak_pss_mb"]}

            got = rounds_of(cont, args.rounds, one, log)
            row = sluice_cases.foreign_summary(layout, res, w, got)
            row["peak_pss_mb"] = {c["name"]: median_or_none([g and g["pss"] for g in got[c["name"]]])
                                  for c in cont}
            out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="sluice Release build dir")
    ap.add_argument("--images", required=True, help="image folder (class subfolders)")
    ap.add_argument("--lmdb", help="the images packed to LMDB")
    ap.add_argument("--hdf5", help="the images packed to HDF5")
    ap.add_argument("--lmdb-levels", help="the images packed to LMDB with resolution levels")
    ap.add_argument("--beton", help="the images as an FFCV .beton")
    ap.add_argument("--det-lmdb", help="the images with boxes (bench/det_data.py), LMDB")
    ap.add_argument("--det-json", help="the same boxes as a COCO instances file")
    ap.add_argument("--venv", default=os.path.join(HERE, "venv"))
    ap.add_argument("--out", required=True, help="results JSON path")
    ap.add_argument("--res", default="224,160,128")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs-drift", type=int, default=5)
    ap.add_argument("--peer-res", help="resolutions for the peers (default: --res)")
    ap.add_argument("--peers", default=",".join(PEERS), help="peers to run if installed")
    ap.add_argument("--mode", default="full")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--io-all-res", action="store_true",
                    help="every io backend at every resolution (default: all at 224, mmap elsewhere)")
    ap.add_argument("--formats-dir", help="scratch dir for bench_formats (default: beside --out)")
    ap.add_argument("--prep-log", help="lines 'error MSG' / 'note MSG' from run.sh's data preparation")
    ap.add_argument("--baseline-build", help="a Release build of another git revision (run.sh --baseline): "
                    "its sluice rows run in the same rounds as the current build's")
    ap.add_argument("--baseline-label", default="baseline", help="its rows' name, e.g. sluice@57efa62")
    ap.add_argument("--baseline-lmdb", help="the images packed to LMDB by the baseline's own sluice pack")
    ap.add_argument("--baseline-lmdb-levels", help="the same with levels, packed by the baseline")
    ap.add_argument("--foreign-manifest",
                    help="`LAYOUT PATH` lines from bench/peers/foreign.py prepare: the foreign-layout rows")
    ap.add_argument("--remote-shard-mb", type=int, default=16,
                    help="remote rows: about this many MB a shard or chunk, every copy")
    ap.add_argument("--remote-skip", type=int, default=1,
                    help="remote rows: untimed batches at an epoch's start (every contender)")
    ap.add_argument("--rows", default="all",
                    help="sections to run, comma-separated, of: %s (default all)" % ",".join(SECTIONS))
    args = ap.parse_args()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    sections = SECTIONS if args.rows == "all" else [x for x in args.rows.split(",") if x]
    bad = [x for x in sections if x not in SECTIONS]
    if bad:
        ap.error("--rows: unknown section(s) %s (have %s)" % (", ".join(bad), ", ".join(SECTIONS)))
    resolutions = [int(x) for x in args.res.split(",") if x]
    peer_res = [int(x) for x in (args.peer_res or args.res).split(",") if x]
    workers = [int(x) for x in args.workers.split(",") if x]
    env = dict(MALLOC_ENV)
    env.update({"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    vpy = os.path.join(args.venv, "bin", "python")
    status = peer_status(args.venv)
    wanted = [p for p in args.peers.split(",") if p]
    peers = [p for p in wanted if p in status and status[p]["status"] == "ok" and os.path.exists(vpy)]
    if "ffcv" in peers and not args.beton:
        peers.remove("ffcv")
        status["ffcv"] = {"status": "not run", "error": "no .beton was prepared"}

    result = {"schema": 1, "mode": args.mode,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": machine_info(),
              "settings": {"resolutions": resolutions, "peer_resolutions": peer_res,
                           "workers": workers, "batch": args.batch, "rounds": args.rounds,
                           "transform": "random-resized-crop scale (0.08, 1) ratio (3/4, 4/3), "
                                        "flip 0.5, uint8 output",
                           "env": env, "nice": 5, "images": args.images, "rows": sections,
                           "image_count": sum(len(fs) for _, _, fs in os.walk(args.images)),
                           "image_bytes": sum(os.path.getsize(os.path.join(d, f))
                                              for d, _, fs in os.walk(args.images) for f in fs)},
              "peers": status, "runs": [], "errors": [], "notes": []}
    if args.prep_log and os.path.exists(args.prep_log):
        with open(args.prep_log) as f:
            for line in f:
                kind, _, msg = line.strip().partition(" ")
                if msg:
                    result["errors" if kind == "error" else "notes"].append("prepare: " + msg)

    def record(section, contender, rnd, res, workers_, r, need_records=True):
        recs = r["records"]
        entry = {"section": section, "contender": contender, "round": rnd, "res": res,
                 "workers": workers_, "rc": r["rc"], "wall_s": r["wall_s"], "loadavg": r["loadavg"],
                 "peak_rss_mb": r["peak_rss_mb"], "peak_pss_mb": r["peak_pss_mb"],
                 "peak_anon_mb": r["peak_anon_mb"],
                 "maxrss_mb": r["maxrss_mb"], "records": recs}
        if r["rc"] != 0 or (need_records and not recs):
            entry["error"] = r["stderr_tail"] or "no RESULT line"
            result["errors"].append("%s %s res=%s w=%s: %s" % (section, contender, res, workers_,
                                                                 entry["error"][-400:]))
        result["runs"].append(entry)
        return entry

    sc = sluice_cases.Cases(args.build, args.images, args.lmdb, args.hdf5, args.batch, log,
                            smoke=args.mode == "smoke", io_all_res=args.io_all_res,
                            lmdb_levels=args.lmdb_levels)
    result["sluice"] = sc.describe()
    base = None
    if args.baseline_build:
        base = sluice_cases.Cases(args.baseline_build, args.images, args.baseline_lmdb, None, args.batch, log,
                                  smoke=args.mode == "smoke", io_all_res=False,
                                  lmdb_levels=args.baseline_lmdb_levels)
        result["baseline"] = dict(base.describe(), label=args.baseline_label)
        if not base.lib:
            result["errors"].append("baseline %s: libsluice.so was not built" % args.baseline_label)
    summary = {"decode": [], "loader": [], "efficiency": [], "drift": None, "formats": None,
               "binding": None, "levels_set": sc.LEVELS if sc.levels else None}

    def note_missing(section, what):
        msg, is_error = sc.missing(what)
        result["errors" if is_error else "notes"].append("%s: %s" % (section, msg))

    # 1, 2: decode ceiling and sluice decode+augment, single thread; the
    # program alternates (a) and (b) over its own rounds.
    dec_rounds = max(5, args.rounds) if args.mode != "smoke" else 1
    dec = sc.decode_contenders(dec_rounds) if "decode" in sections else None
    if dec:
        log("decode: bench_decode")
        r = run_process(dec[0]["cmd"], env, args.timeout, log)
        e = record("decode", "bench_decode", 0, None, 1, r, need_records=False)
        rows = sc.parse_decode(r["stdout"], r["records"]) if r["rc"] == 0 else []
        for row in rows:
            row["n"] = dec_rounds
        e["stdout"] = r["stdout"]
        if r["rc"] == 0 and not rows:
            result["errors"].append("decode: bench_decode printed nothing the harness can read")
        summary["decode"] = rows
    elif "decode" in sections:
        note_missing("decode", "decode")
    # The baseline's bench_decode, right after: its rates per thread-CPU-second
    # against the current build's give the decode speedup of this run.
    bdec = base.decode_contenders(dec_rounds) if base and "decode" in sections else []
    if bdec:
        log("decode: %s bench_decode" % args.baseline_label)
        r = run_process(bdec[0]["cmd"], env, args.timeout, log)
        e = record("decode", "%s_bench_decode" % args.baseline_label, 0, None, 1, r, need_records=False)
        e["stdout"] = r["stdout"]
        brows = sluice_cases.baseline_decode_rows(summary.get("decode", []), base.parse_decode(r["stdout"], r["records"])
                                                   if r["rc"] == 0 else [])
        summary["baseline_decode"] = {"label": args.baseline_label, "rows": brows}

    # 3, 4: loaders end to end, sluice's and the peers', same res and workers.
    for res in resolutions if "loader" in sections else []:
        for w in workers:
            cont = sc.loader_contenders(res, w)
            if base:
                cont += base.baseline_contenders(res, w, args.baseline_label)
            if res in peer_res:
                for p in peers:
                    cmd = [status[p].get("python", vpy), os.path.join(HERE, "peers", "peer.py"), p,
                           "--data", args.images,
                           "--res", str(res), "--workers", str(w), "--batch", str(args.batch)]
                    if p == "ffcv":
                        cmd += ["--beton", args.beton]
                    cont.append({"name": p, "cmd": cmd, "kind": "peer"})
            if not cont:
                continue
            log("loader res=%d workers=%d: %s" % (res, w, ", ".join(c["name"] for c in cont)))

            def one(c, rnd, res=res, w=w):
                e = record("loader", c["name"], rnd, res, w, run_process(c["cmd"], env, args.timeout, log))
                rate = cpu_rate = None
                for rec in e["records"]:
                    if "images_per_s" in rec:
                        rate = float(rec["images_per_s"])
                        cpu_rate = rec.get("images_per_cpu_s")
                return {"rate": rate, "cpu_rate": cpu_rate, "pss": e["peak_pss_mb"], "rss": e["peak_rss_mb"],
                        "anon": e["peak_anon_mb"]}

            got = rounds_of(cont, args.rounds, one, log)
            for c in cont:
                rates = [g["rate"] for g in got[c["name"]]]
                ok = [x for x in rates if x is not None]
                summary["loader"].append({
                    "contender": c["name"], "kind": c.get("kind", "sluice"), "res": res, "workers": w,
                    "label": c.get("label", PEER_LABEL.get(c["name"], c["name"])),
                    "images_per_s": median_or_none(rates),
                    "per_worker": median_or_none(rates) / w if ok else None,
                    "images_per_cpu_s": median_or_none([g["cpu_rate"] for g in got[c["name"]]]),
                    "min": min(ok) if ok else None, "max": max(ok) if ok else None, "n": len(ok),
                    "peak_pss_mb": median_or_none([g["pss"] for g in got[c["name"]]]),
                    "peak_rss_mb": median_or_none([g["rss"] for g in got[c["name"]]]),
                    "peak_anon_mb": median_or_none([g["anon"] for g in got[c["name"]]])})
            primary = next((c["name"] for c in cont if c.get("kind", "sluice") == "sluice"), None)
            if primary:
                prim_rates = [g["rate"] for g in got[primary]]
                for c in cont:
                    if c["name"] == primary:
                        continue
                    ratio, n = paired_ratio(prim_rates, [g["rate"] for g in got[c["name"]]])
                    cpu_ratio, _ = paired_ratio([g["cpu_rate"] for g in got[primary]],
                                                [g["cpu_rate"] for g in got[c["name"]]])
                    summary.setdefault("ratios", []).append(
                        {"sluice": primary, "vs": c["name"], "res": res, "workers": w,
                         "ratio": ratio, "cpu_ratio": cpu_ratio, "pairs": n})
            # Each baseline row against the current build's same row (paired).
            for b in [c for c in cont if c.get("kind") == "baseline"]:
                if b["pairs_with"] not in got:
                    continue
                ratio, n = paired_ratio([g["rate"] for g in got[b["pairs_with"]]],
                                        [g["rate"] for g in got[b["name"]]])
                cpu_ratio, _ = paired_ratio([g["cpu_rate"] for g in got[b["pairs_with"]]],
                                            [g["cpu_rate"] for g in got[b["name"]]])
                summary.setdefault("baseline_ratios", []).append(
                    {"sluice": b["pairs_with"], "vs": b["name"], "label": args.baseline_label,
                     "res": res, "workers": w, "ratio": ratio, "cpu_ratio": cpu_ratio, "pairs": n})
            # augment.jpeg_planes against the same row without it (paired).
            for c in [c for c in cont if c.get("kind") == "sluice_planes"]:
                if c["pairs_with"] not in got or c["name"] not in got:
                    continue
                ratio, n = paired_ratio([g["rate"] for g in got[c["name"]]],
                                        [g["rate"] for g in got[c["pairs_with"]]])
                cpu_ratio, _ = paired_ratio([g["cpu_rate"] for g in got[c["name"]]],
                                            [g["cpu_rate"] for g in got[c["pairs_with"]]])
                summary.setdefault("planes_ratios", []).append(
                    {"sluice": c["pairs_with"], "planes": c["name"], "res": res, "workers": w,
                     "ratio": ratio, "cpu_ratio": cpu_ratio, "pairs": n})
                log("planes: %s / %s at %d px, %d workers: %.3f (cpu %.3f, %d pairs)"
                    % (c["name"], c["pairs_with"], res, w, ratio or 0, cpu_ratio or 0, n))
            # The levels file against the peers (on the original files) and
            # against sluice's own file without levels.
            for lv in [c for c in cont if c.get("kind") == "sluice_levels"]:
                for c in cont:
                    if c.get("kind") not in ("peer", "sluice") or (c.get("kind") == "sluice"
                                                                   and c["name"] != primary):
                        continue
                    ratio, n = paired_ratio([g["rate"] for g in got[lv["name"]]],
                                            [g["rate"] for g in got[c["name"]]])
                    cpu_ratio, _ = paired_ratio([g["cpu_rate"] for g in got[lv["name"]]],
                                                [g["cpu_rate"] for g in got[c["name"]]])
                    summary.setdefault("levels_ratios", []).append(
                        {"sluice": lv["name"], "vs": c["name"], "res": res, "workers": w,
                         "ratio": ratio, "cpu_ratio": cpu_ratio, "pairs": n})

    # 4b: the recipes people train (TrivialAugmentWide + RandomErasing,
    # RandAugment m9 mstd0.5 + RandomErasing) at 224 (or the largest
    # resolution) on one worker: sluice against the torch and DALI peers
    # doing the same, and against its own rrc.
    rres = 224 if 224 in resolutions else max(resolutions)
    rw = min(workers)
    rcont = sc.recipe_contenders(rres, rw) if "recipes" in sections else None
    if rcont:
        for p in [p for p in peers if p in ("torch_pil", "torch_tvio", "dali_cpu")]:
            for rc in sluice_cases.RECIPES:
                rcont.append({"name": "%s_%s" % (p, rc), "kind": "peer", "recipe": rc,
                              "cmd": [status[p].get("python", vpy), os.path.join(HERE, "peers", "peer.py"),
                                      p, "--data", args.images, "--res", str(rres), "--workers", str(rw),
                                      "--batch", str(args.batch), "--recipe", rc]})
        log("recipes res=%d workers=%d: %s" % (rres, rw, ", ".join(c["name"] for c in rcont)))

        def one_recipe(c, rnd):
            e = record("recipes", c["name"], rnd, rres, rw, run_process(c["cmd"], env, args.timeout, log))
            return next((float(x["images_per_s"]) for x in e["records"] if "images_per_s" in x), None)

        got = rounds_of(rcont, args.rounds, one_recipe, log)
        summary["recipes"] = sluice_cases.recipe_summary(got, rres, rw)
    elif "recipes" in sections:
        note_missing("recipes", "loader")

    # 4c: detection: the images with boxes (bench/det_data.py), RandomResized
    # or RandomIoUCrop + flip with the boxes moved, at the recipes'
    # resolution on one worker, one run: sluice against a torch DataLoader
    # doing the same box-aware transforms (peer.py torch_det).
    dcont = (sluice_cases.detection_contenders(sc.lib, args.det_lmdb, rres, rw, args.batch)
             if "detection" in sections else None)
    if dcont:
        tpeer = next((p for p in ("torch_tvio", "torch_pil") if p in peers), None)
        if tpeer and args.det_json:
            for crop in sluice_cases.DETECT_CROPS:
                dcont.append({"name": "torch_det_%s" % crop, "kind": "peer", "crop": crop,
                              "cmd": [status[tpeer].get("python", vpy),
                                      os.path.join(HERE, "peers", "peer.py"), "torch_det",
                                      "--data", args.images, "--coco", args.det_json,
                                      "--res", str(rres), "--workers", str(rw),
                                      "--batch", str(args.batch), "--detect", crop]})
        log("detection res=%d workers=%d: %s" % (rres, rw, ", ".join(c["name"] for c in dcont)))

        def one_det(c, rnd):
            e = record("detection", c["name"], rnd, rres, rw, run_process(c["cmd"], env, args.timeout, log))
            return next((float(x["images_per_s"]) for x in e["records"] if "images_per_s" in x), None)

        got = rounds_of(dcont, 1, one_det, log)
        summary["detection"] = sluice_cases.detection_summary(got, rres, rw)
    elif args.det_lmdb and "detection" in sections:
        note_missing("detection", "loader")

    # 5: sluice RSS over epochs.
    drift = sc.drift_contender(max(resolutions), max(workers), args.epochs_drift) if "drift" in sections else None
    if drift:
        log("drift: %s" % drift["name"])
        r = run_process(drift["cmd"], env, args.timeout, log)
        record("drift", drift["name"], 0, max(resolutions), max(workers), r)
        summary["drift"] = sc.summarize_drift(r)
    elif "drift" in sections:
        note_missing("drift", "drift")

    # End to end vs single thread, as the loader's own bench measures it.
    for c in sc.efficiency_contenders(resolutions) if "efficiency" in sections else []:
        log("efficiency: %s" % c["name"])
        r = run_process(c["cmd"], env, args.timeout, log)
        record("efficiency", c["name"], 0, c["res"], None, r)
        summary["efficiency"] += sc.parse_efficiency(r["records"])
    if not sc.bench_loader and "efficiency" in sections:
        note_missing("efficiency", "efficiency")

    # The Python package against the C loader, in one process.
    bc = sc.binding_contender(max(resolutions), max(workers)) if "binding" in sections else None
    if bc:
        log("binding: %s" % bc["name"])
        benv = dict(env)
        benv.update(bc["env"])
        r = run_process(bc["cmd"], benv, args.timeout, log)
        record("binding", bc["name"], 0, max(resolutions), max(workers), r)
        summary["binding"] = sc.parse_binding(r["records"])
    elif "binding" in sections:
        result["notes"].append("binding: not run (no build/python package, dataset or NumPy)")

    # Formats: pack throughput and index-open time, reported as printed.
    fc = sc.formats_contender(args.formats_dir or tempfile.gettempdir()) if "formats" in sections else None
    if fc:
        log("formats: bench_formats")
        r = run_process(fc["cmd"], env, args.timeout, log)
        record("formats", "bench_formats", 0, None, None, r, need_records=False)
        summary["formats"] = {"rc": r["rc"], "stdout": r["stdout"][-6000:]}
    elif args.mode != "smoke" and "formats" in sections:
        note_missing("formats", "formats")

    # Foreign layouts (issue 27): sluice reading each file in place against
    # the reader that layout's users run, at the recipes' resolution (224 or
    # the largest) with each worker count, rounds alternated and paired.
    if "foreign" in sections:
        summary["foreign"] = run_foreign(args, sc, rres, workers, env, vpy, status, record, result, log)

    # Remote datasets (issue 38): SeaweedFS and nginx on loopback, sluice's
    # cold, warm, local (and range) epochs against the remote peers, each
    # worker count, at the recipes' resolution (bench/remote_rows.py).
    if "remote" in sections:
        import remote_rows

        summary["remote"] = remote_rows.run_remote(args, sc, rres, workers, env, vpy, run_process,
                                                   module_check, record, result, log)

    summary["goals"] = sluice_cases.goals(summary, workers)
    result["summary"] = summary
    result["machine"]["loadavg_end"] = os.getloadavg()[0]
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, args.out)
    log("harness: wrote %s (%d runs, %d errors)" % (args.out, len(result["runs"]), len(result["errors"])))
    for e in result["notes"]:
        log("  note: " + e.splitlines()[0][:300])
    for e in result["errors"]:
        log("  error: " + e.splitlines()[0][:300])
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
