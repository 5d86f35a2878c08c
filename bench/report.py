#!/usr/bin/env python3
"""Turns one bench/harness.py results JSON into a markdown report (X.md beside
X.json), PNG plots (X-loader.png, X-decode.png; needs matplotlib, skipped with
a note otherwise) and, with --benchmarks FILE, rewrites the generated part of
BENCHMARKS.md (between its BEGIN/END markers) with the latest report.

    report.py bench/results/2026-11-30-host.json [--benchmarks BENCHMARKS.md]
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sluice_cases  # noqa: E402
import remote_rows  # noqa: E402  (the remote rows' table)

BEGIN = "<!-- BEGIN bench/report.py: generated, do not edit by hand -->"
END = "<!-- END bench/report.py -->"


def fmt(x, spec="%.0f"):
    return "—" if x is None else spec % x


def machine_lines(r):
    m, s = r["machine"], r["settings"]
    return [
        "- Machine: %s, %s CPUs, %s GB RAM, Linux %s, glibc %s, host `%s`; load average %.2f at start, %.2f at end"
        % (m.get("cpu", "?"), m.get("cpus"), m.get("mem_gb"), m.get("kernel"), m.get("glibc"),
           m.get("host"), m.get("loadavg_start", 0), m.get("loadavg_end", 0)),
        "- sluice %s, run %s (%s mode)" % (m.get("git"), r["date"], r["mode"]),
        "- Data: %d images, %.0f KB mean, in `%s`" % (s["image_count"], s["image_bytes"] / 1024 / max(1, s["image_count"]),
                                                      os.path.basename(os.path.dirname(s["images"])) + "/" + os.path.basename(s["images"])),
        "- Transform: %s; batch %d; %d rounds, order reversed every other round; medians, ratios paired per round"
        % (s["transform"], s["batch"], s["rounds"]),
        "- Environment of every contender (sluice and each Python peer alike): %s, `nice -n %d`"
        % (", ".join("`%s=%s`" % kv for kv in sorted(s["env"].items())), s["nice"]),
    ]


def _per_core_table(rows, peers, key, ratios):
    """One res × workers table of rows[key] for sluice and each peer, with
    sluice ÷ peer (ratios[(peer, res, workers)]) beside each peer."""
    L = ["| res | W | sluice | " + " | ".join(peers) + " |", "|---|---|---|" + "---|" * len(peers)]
    for res in sorted({x["res"] for x in rows}, reverse=True):
        for w in sorted({x["workers"] for x in rows}):
            sub = [x for x in rows if x["res"] == res and x["workers"] == w]
            prim = next((x for x in sub if x["kind"] == "sluice"), None)
            cells = []
            for p in peers:
                x = next((y for y in sub if y["contender"] == p), None)
                cells.append("—" if x is None else "%s (%s)" % (fmt(x.get(key)),
                                                               fmt(ratios.get((p, res, w)), "%.2f×")))
            L.append("| %d | %d | %s | %s |" % (res, w, fmt(prim and prim.get(key)), " | ".join(cells)))
    return L


def headline(su):
    """Images/s per worker (per core), sluice's primary row against each peer,
    with sluice ÷ peer (median of paired rounds) in parentheses."""
    rows = [x for x in su.get("loader", []) if x["images_per_s"] is not None]
    if not rows:
        return []
    ratios = {(x["vs"], x["res"], x["workers"]): x["ratio"] for x in su.get("ratios", [])}
    peers = list(dict.fromkeys(x["contender"] for x in rows if x["kind"] == "peer"))
    L = ["### Headline: images/s per core (sluice ÷ peer)", ""]
    L += _per_core_table(rows, peers, "per_worker", ratios)
    prim_name = next((x["label"] for x in rows if x["kind"] == "sluice"), "sluice")
    L += ["", "sluice = %s. Wall clock: images/s ÷ workers." % prim_name, ""]
    if any(x.get("images_per_cpu_s") for x in rows):
        cr = {(x["vs"], x["res"], x["workers"]): x.get("cpu_ratio") for x in su.get("ratios", [])}
        L += ["Per CPU-second (CPU time of the whole process tree over the timed part; what each "
              "loader costs whatever else runs on the machine):", ""]
        L += _per_core_table(rows, peers, "images_per_cpu_s", cr)
        L.append("")
    return L


def levels_table(su):
    """The LMDB packed with resolution levels against sluice's file without
    them and against each peer (which read the original JPEGs): images/s
    per core, levels ÷ that one (median of paired rounds) beside it."""
    rows = [x for x in su.get("loader", []) if x["images_per_s"] is not None]
    lv = [x for x in rows if x["kind"] == "sluice_levels"]
    if not lv:
        return []
    ratios = {(x["vs"], x["res"], x["workers"]): x for x in su.get("levels_ratios", [])}
    others = list(dict.fromkeys(x["contender"] for x in rows if x["kind"] == "peer"))
    L = ["### With resolution levels: images/s per core (levels ÷ that loader)", "",
         "sluice's LMDB packed with `--levels %s`; the peers read the original JPEGs "
         "and sluice's first row its file without levels." % su.get("levels_set", "?"), "",
         "| res | W | levels | sluice, no levels | " + " | ".join(others) + " |",
         "|---|---|---|---|" + "---|" * len(others)]
    for x in sorted(lv, key=lambda x: (-x["res"], x["workers"])):
        sub = [y for y in rows if y["res"] == x["res"] and y["workers"] == x["workers"]]
        prim = next((y for y in sub if y["kind"] == "sluice"), None)

        def cell(y):
            if y is None:
                return "—"
            rt = ratios.get((y["contender"], x["res"], x["workers"]))
            return "%s (%s)" % (fmt(y["per_worker"]), fmt(rt and rt["ratio"], "%.2f×"))
        cells = [cell(prim)] + [cell(next((y for y in sub if y["contender"] == p), None))
                                for p in others]
        L.append("| %d | %d | %s | %s |" % (x["res"], x["workers"], fmt(x["per_worker"]),
                                           " | ".join(cells)))
    return L + [""]


def baseline_table(su):
    """The current build against a build of another revision (run.sh
    --baseline REV) in the same run: loader rows (median of paired rounds,
    alternating order) and bench_decode's rows (per thread-CPU-second)."""
    rows = {(x["contender"], x["res"], x["workers"]): x for x in su.get("loader", [])}
    br = su.get("baseline_ratios", [])
    bd = su.get("baseline_decode") or {}
    if not br and not bd.get("rows"):
        return []
    label = (br and br[0]["label"]) or bd.get("label", "baseline")
    L = ["### Against %s, same run (this build ÷ %s)" % (label, label), ""]
    if br:
        L += ["| res | W | row | this build | %s | ratio | per CPU-second |" % label, "|---|---|---|---|---|---|---|"]
        for x in sorted(br, key=lambda x: (-x["res"], x["workers"], x["sluice"])):
            cur = rows.get((x["sluice"], x["res"], x["workers"]))
            old = rows.get((x["vs"], x["res"], x["workers"]))
            L.append("| %d | %d | %s | %s | %s | %s (%d pairs) | %s |" % (
                x["res"], x["workers"], x["sluice"], fmt(cur and cur["images_per_s"]),
                fmt(old and old["images_per_s"]), fmt(x["ratio"], "%.2f×"), x["pairs"],
                fmt(x.get("cpu_ratio"), "%.2f×")))
        L.append("")
    if bd.get("rows"):
        L += ["bench_decode, images per thread-CPU-second, one process each, back to back; "
              "\"of (a)\" is the ratio of each build's rate ÷ its own tjDecompress2 full decode "
              "(the same code in both: it cancels the machine's speed changing between the two):", "",
              "| case | res | this build | %s | ratio | ratio of (a) |" % label, "|---|---|---|---|---|---|"]
        for x in bd["rows"]:
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                x["case"], x["res"] or "full", fmt(x["images_per_s"]), fmt(x["baseline_images_per_s"]),
                fmt(x["speedup"], "%.2f×"), fmt(x.get("speedup_vs_full"), "%.2f×")))
        L.append("")
    return L


def recipes_table(su):
    """The recipe rows: images/s per core of each loader with each recipe,
    sluice ÷ that peer (median of paired rounds), and sluice's cost of the
    recipe against its own rrc."""
    rec = su.get("recipes")
    if not rec or not rec.get("rows"):
        return []
    rows = {x["contender"]: x for x in rec["rows"]}
    ratios = {(x["recipe"], x["vs"]): x for x in rec.get("ratios", [])}
    cost = {x["recipe"]: x for x in rec.get("cost", [])}
    peers = sorted({n.rsplit("_", 1)[0] for n in rows if not n.startswith("sluice_")})
    L = ["### Recipes: images/s per core at %s px, %s worker(s) (sluice ÷ peer)" % (rec["res"], rec["workers"]),
         "", "rrc: RandomResizedCrop + flip; tv: + TrivialAugmentWide + RandomErasing(0.1); "
         "timm: + RandAugment(2, 9, 11 bins; sluice with mstd 0.5) + RandomErasing(0.25); u8, "
         "mixing left to the GPU.", "",
         "| recipe | sluice | sluice cost vs rrc | " + " | ".join(peers) + " |",
         "|---|---|---|" + "---|" * len(peers)]
    for rc in ("rrc", "tv", "timm"):
        s = rows.get("sluice_%s" % rc)
        c = cost.get(rc)
        cells = []
        for p in peers:
            y = rows.get("%s_%s" % (p, rc))
            rt = ratios.get((rc, p))
            cells.append("%s (%s)" % (fmt(y and y["per_worker"]), fmt(rt and rt["ratio"], "%.2f×")))
        L.append("| %s | %s | %s | %s |" % (rc, fmt(s and s["per_worker"]),
                                            fmt(c and c["cost"], "%.2f×") if rc != "rrc" else "1",
                                            " | ".join(cells)))
    return L + [""]


def detection_table(su):
    """The detection rows: images/s per core of sluice and the torch peer
    with each box-aware crop, and sluice ÷ peer."""
    det = su.get("detection")
    if not det or not det.get("rows"):
        return []
    rows = {x["contender"]: x for x in det["rows"]}
    ratios = {(x["crop"], x["vs"]): x for x in det.get("ratios", [])}
    peers = sorted({n.rsplit("_det_", 1)[0] for n in rows if not n.startswith("sluice_")})
    L = ["### Detection: images/s per core at %s px, %s worker(s), one run (sluice ÷ peer)"
         % (det["res"], det["workers"]), "",
         "COCO-style boxes on the bench's images (bench/det_data.py); rrc: "
         "RandomResizedCrop, iou_crop: RandomIoUCrop + Resize; + flip 0.5, boxes moved, "
         "clipped and sanitized (under 1 px dropped); u8.", "",
         "| crop | sluice | " + " | ".join(peers) + " |", "|---|---|" + "---|" * len(peers)]
    for crop in ("rrc", "iou_crop"):
        s = rows.get("sluice_det_%s" % crop)
        cells = []
        for p in peers:
            y = rows.get("%s_det_%s" % (p, crop))
            rt = ratios.get((crop, p))
            cells.append("%s (%s)" % (fmt(y and y["per_worker"]), fmt(rt and rt["ratio"], "%.2f×")))
        L.append("| %s | %s | %s |" % (crop, fmt(s and s["per_worker"]), " | ".join(cells)))
    return L + [""]


def foreign_table(su):
    """The foreign-layout rows: sluice reading each layout in place against
    the reader its users run, images/s per core (÷ workers) and per
    CPU-second, sluice ÷ peer (median of paired rounds)."""
    rows = su.get("foreign") or []
    if not rows:
        return []
    L = ["### Foreign layouts read in place: images/s per core (sluice ÷ the reader its users run)", "",
         "The same images written by each layout's own client (bench/peers/foreign.py); both loaders "
         "random-resized-crop + flip to uint8 with the same workers and batch.", "",
         "| layout | res | W | sluice | reader | per core | per CPU-second | sluice ÷ reader |",
         "|---|---|---|---|---|---|---|---|"]
    for x in rows:
        L.append("| %s | %d | %d | in place, io=mmap | %s | %s vs %s | %s vs %s | %s%s |" % (
            x["label"], x["res"], x["workers"], x["peer_label"],
            fmt(x["sluice_per_core"]), fmt(x["peer_per_core"]),
            fmt(x["sluice_per_cpu_s"]), fmt(x["peer_per_cpu_s"]),
            fmt(x["ratio"], "%.2f×"), " (%d pairs)" % x["pairs"] if x["pairs"] else ""))
    return L + [""]


def report_md(r, plots, prefix=""):
    su = r.get("summary", {})
    L = ["## Results %s (%s)" % (r["date"], r["mode"]), ""] + machine_lines(r) + [""]

    L += headline(su) + baseline_table(su) + levels_table(su) + recipes_table(su) + detection_table(su) + foreign_table(su) + remote_rows.remote_table(su, fmt) + ["### Goals", "", "| goal | W | figure | met | how |", "|---|---|---|---|---|"]
    for g in su.get("goals", []):
        met = {True: "**met**", False: "not met", None: "not measured"}[g["met"]]
        fig = "—" if g["figure"] is None else ("%s%%" % g["figure"] if "RSS" in g["goal"] else
                                               "%s s" % g["figure"] if g["goal"].endswith(" s on loopback")
                                               else "%s×" % g["figure"])
        L.append("| %s | %s | %s | %s | %s |" % (g["goal"], g.get("workers", ""), fig, met, g.get("note", "")))
    L.append("")

    dec = su.get("decode", [])
    L += ["### Single thread: decode ceiling vs sluice decode+augment", ""]
    if dec:
        L += ["| case | res | images/s (median) | × plain full decode | rounds |", "|---|---|---|---|---|"]
        for d in dec:
            L.append("| %s | %s | %s | %s | %d |" % (d["case"], d.get("res") or "full", fmt(d["images_per_s"]),
                                                 fmt(d.get("ratio_vs_full"), "%.2f"), d["n"]))
    else:
        L.append("Not measured: %s" % next((e for e in r.get("errors", []) + r.get("notes", [])
                                             if e.startswith("decode")), "?"))
    L.append("")

    rows = su.get("loader", [])
    ratios = {(x["vs"], x["res"], x["workers"]): x for x in su.get("ratios", [])}
    L += ["### Loaders end to end: images/s (median over rounds)", "",
          "sluice ÷ peer is the median of per-round ratios against the first sluice row of the same res and W.", "",
          "Memory: peaks over the process tree (the loader and its worker processes). RSS sums every "
          "process's resident pages (shared libraries counted once per worker); PSS splits shared "
          "pages fairly but counts the page cache of mapped files (sluice's mmap io maps the dataset; "
          "FFCV maps its .beton); anonymous is what the processes allocated.", "",
          "| res | W | loader | images/s | per worker | min–max | peak RSS MB | peak PSS MB | peak anon MB | sluice ÷ this |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for x in rows:
        rt = ratios.get((x["contender"], x["res"], x["workers"]))
        L.append("| %d | %d | %s | %s | %s | %s–%s | %s | %s | %s | %s |" % (
            x["res"], x["workers"], x["label"], fmt(x["images_per_s"]), fmt(x["per_worker"]),
            fmt(x["min"]), fmt(x["max"]), fmt(x.get("peak_rss_mb")), fmt(x["peak_pss_mb"]),
            fmt(x.get("peak_anon_mb")),
            fmt(rt and rt["ratio"], "%.2f×")))
    if not rows:
        L.append("| | | nothing measured | | | | | | | |")
    L.append("")

    eff = su.get("efficiency", [])
    L += ["### sluice end to end vs its single-thread pipeline (bench_loader)", ""]
    if eff:
        L += ["Same process, same dataset: the single-thread `sl_pipeline_run` rate, then the loader "
              "with W workers (bench_loader's config: fp16 output, the loader's default).", "",
              "| res | W | single thread img/s | loader img/s | loader ÷ (W × single) |", "|---|---|---|---|---|"]
        for e in eff:
            L.append("| %s | %s | %s | %s | %s |" % (e["res"], e["workers"], fmt(e["single_thread"]),
                                                 fmt(e["images_per_s"]), fmt(e["efficiency"], "%.2f")))
    else:
        L.append("Not measured: %s" % next((e for e in r.get("errors", []) + r.get("notes", [])
                                             if e.startswith("efficiency")), "?"))
    L.append("")

    d = su.get("drift")
    L += ["### sluice RSS over epochs", ""]
    if d and d.get("rss_kb"):
        L.append("sluice_loader.py, LMDB, io=mmap, %d px, %d workers. VmRSS at the end of each epoch (MB): %s — "
                 "drift %.2f%% from the first to the last." % (
                     max(r["settings"]["resolutions"]),
                     max(r["settings"]["workers"]),
                     ", ".join("%.1f" % (v / 1024) for v in d["rss_kb"]), 100 * d["drift"]))
        if d.get("anon_kb"):
            L.append("RssAnon (what the loader allocated; the rest is the mapped dataset): %s MB — drift %.2f%%."
                     % (", ".join("%.1f" % (v / 1024) for v in d["anon_kb"]), 100 * d["anon_drift"]))
    else:
        L.append("Not measured: %s" % ((d or {}).get("error") or
                                       next((e for e in r.get("errors", []) + r.get("notes", [])
                                            if e.startswith("drift")), "?")))
    L.append("")

    b = su.get("binding")
    L += ["### The Python binding against the C loader", ""]
    if b:
        L.append("bench/bench_binding.py, %s px, %s workers, batch %s: the `sluice` package and the C API "
                 "(ctypes) in one process, epochs alternating; binding ÷ C median %.3f over %s pairs "
                 "(%s); %s vs %s img/s. Binding VmRSS at the end of each further epoch (MB): %s." % (
                     b.get("res"), b.get("workers"), b.get("batch"), b["ratio_median"], b.get("pairs"),
                     ", ".join("%.2f" % x for x in b.get("ratios", [])),
                     fmt(b.get("binding_images_per_s_median")), fmt(b.get("c_images_per_s_median")),
                     ", ".join("%.1f" % (v / 1024) for v in b.get("binding_rss_kb", []))))
    else:
        L.append("Not measured: %s" % next((e for e in r.get("errors", []) + r.get("notes", [])
                                             if e.startswith("binding")), "?"))
    L.append("")

    dec_run = next((x for x in r.get("runs", []) if x["section"] == "decode"), None)
    if dec_run and dec_run.get("stdout"):
        L += ["<details><summary>bench_decode output</summary>", "", "```", dec_run["stdout"].strip(), "```",
              "</details>", ""]
    fm = su.get("formats")
    if fm:
        L += ["### Formats (bench_formats: pack throughput, index-open time)", "", "```",
              fm["stdout"].strip(), "```", ""]
    L += ["### Peers", "", "| peer | status | version or error |", "|---|---|---|"]
    for p, st in r.get("peers", {}).items():
        detail = st.get("version") or st.get("error", "")
        detail = detail.replace("\n", " ").replace("|", "\\|")
        if len(detail) > 300:
            detail = detail[:300] + "…"
        L.append("| %s | %s | %s |" % (p, st["status"], detail))
    L.append("")
    if r.get("notes"):
        L += ["### Not in this tree yet", ""]
        L += ["- %s" % e.splitlines()[0][:300] for e in r["notes"]]
        L.append("")
    if r.get("errors"):
        L += ["### Failures in this run", ""]
        L += ["- `%s`" % e.splitlines()[0][:300].replace("`", "'") for e in r["errors"]]
        L.append("")
    if plots:
        L += ["### Plots", ""] + ["![%s](%s%s)" % (os.path.basename(p), prefix, os.path.basename(p))
                                  for p in plots] + [""]
    return "\n".join(L)


def make_plots(r, stem):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed: no plots"
    out = []
    su = r.get("summary", {})
    # The plots keep sluice's mmap rows (what io = auto picks here) and the
    # peers; every io backend is in the table.
    rows = [x for x in su.get("loader", []) if x["images_per_s"] is not None and
            (x["kind"] != "sluice" or x["contender"].endswith("_mmap"))]
    if rows:
        ws = sorted({x["workers"] for x in rows})
        fig, axes = plt.subplots(1, len(ws), figsize=(6.5 * len(ws), 4.8), squeeze=False)
        for ax, w in zip(axes[0], ws):
            sub = [x for x in rows if x["workers"] == w]
            names = list(dict.fromkeys(x["contender"] for x in sub))
            res = sorted({x["res"] for x in sub}, reverse=True)
            width = 0.8 / max(1, len(names))
            for i, n in enumerate(names):
                xs = [j + i * width for j in range(len(res))]
                ys = [next((x["per_worker"] for x in sub if x["contender"] == n and x["res"] == rr), 0)
                      for rr in res]
                lo = [y - next((x["min"] / w for x in sub if x["contender"] == n and x["res"] == rr), y)
                      for y, rr in zip(ys, res)]
                hi = [next((x["max"] / w for x in sub if x["contender"] == n and x["res"] == rr), y) - y
                      for y, rr in zip(ys, res)]
                ax.bar(xs, ys, width, label=n, yerr=[lo, hi], capsize=2,
                       hatch="" if n.startswith("sluice") else "//")
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(res))])
            ax.set_xticklabels(["%d px" % rr for rr in res])
            ax.set_ylabel("images/s per worker (median, bars: min-max)")
            ax.set_title("end to end, %d worker%s" % (w, "s" if w > 1 else ""))
            ax.legend(fontsize=7)
        fig.suptitle("Loaders per core: random-resized-crop + flip, uint8 (%s)" % r["date"][:10])
        fig.tight_layout()
        path = stem + "-loader.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(path)
    rat = [x for x in su.get("ratios", []) if x["ratio"] is not None and not x["vs"].startswith("sluice")]
    if rat:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for k, vs in enumerate(dict.fromkeys(x["vs"] for x in rat)):
            for w in sorted({x["workers"] for x in rat}):
                pts = sorted((x["res"], x["ratio"]) for x in rat if x["vs"] == vs and x["workers"] == w)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color="C%d" % k,
                            linestyle="-" if w == 1 else "--", label="÷ %s, W=%d" % (vs, w))
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.plot([224], [2.0], "k*", markersize=10, label="goal vs torch_pil")
        ax.plot([128], [3.0], "k*", markersize=10)
        ax.set_xlabel("output resolution (px)")
        ax.set_ylabel("sluice ÷ peer, images/s (median of paired rounds)")
        ax.set_xticks(sorted({x["res"] for x in rat}))
        ax.set_title("sluice (LMDB, mmap) speed-up over each peer")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = stem + "-ratios.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(path)
    dec = [d for d in su.get("decode", []) if d["images_per_s"]]
    if dec:
        fig, ax = plt.subplots(figsize=(6, 4))
        labels = ["%s %s" % (d["case"], d.get("res") or "") for d in dec]
        ax.bar(labels, [d["images_per_s"] for d in dec], color=["gray" if d["case"] == "tj_full" else "C0" for d in dec])
        ax.set_ylabel("images/s, one thread (median)")
        ax.set_title("Decode ceiling vs sluice decode+augment")
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
        fig.tight_layout()
        path = stem + "-decode.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(path)
    return out, None


# The sections of a run that BENCHMARKS.md shows (the latest tables people
# quote); every table stays in the run's own report beside its JSON.
BRIEF = ("### Headline", "### Against", "### With resolution levels", "### Recipes", "### Detection",
         "### Foreign", "### Remote", "### Goals", "### Peers", "### Not in this tree", "### Failures", "### Plots")


def brief_md(md):
    parts = re.split(r"(?m)^(?=### )", md)
    return "".join([parts[0]] + [p for p in parts[1:] if p.startswith(BRIEF)])


def update_benchmarks(path, r, plots, note, json_path):
    rel = os.path.relpath(os.path.dirname(os.path.abspath(json_path)), os.path.dirname(os.path.abspath(path)))
    md = brief_md(report_md(r, plots, rel + "/")) + ("\n%s\n" % note if note else "")
    src = os.path.join(rel, os.path.basename(json_path))
    full = os.path.join(rel, os.path.splitext(os.path.basename(json_path))[0] + ".md")
    block = "%s\n\nFrom [`%s`](%s); every table of the run (single thread, loaders, bench_loader, RSS, formats) in [`%s`](%s).\n\n%s\n%s" % (
        BEGIN, src, src, full, full, md, END)
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--benchmarks", help="BENCHMARKS.md to update")
    args = ap.parse_args()
    with open(args.json) as f:
        r = json.load(f)
    # Goals are recomputed from the measured summary, so a results file made
    # before a change to the goal rules reads the same as a new one.
    if "summary" in r:
        goals = sluice_cases.goals(r["summary"], r["settings"]["workers"])
        if goals != r["summary"].get("goals"):
            r["summary"]["goals"] = goals
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(r, f, indent=1)
            os.replace(tmp, args.json)
    stem = os.path.splitext(args.json)[0]
    plots, note = make_plots(r, stem)
    md = report_md(r, plots)
    if note:
        md += "\n%s\n" % note
    with open(stem + ".md", "w") as f:
        f.write(md)
    print(md)
    if args.benchmarks:
        update_benchmarks(args.benchmarks, r, plots, note, args.json)
        print("report.py: updated %s" % args.benchmarks, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
