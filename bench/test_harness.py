#!/usr/bin/env python3
"""Unit tests of the harness's arithmetic and report (no timing, no peers):
paired ratios, alternating rounds, goal verdicts, RESULT parsing, memory
sampling of a process tree, and the BENCHMARKS.md rewrite. Run by
`bench/run.sh --smoke` and directly: python3 bench/test_harness.py"""
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import cputime  # noqa: E402
import foreign  # noqa: E402
import harness  # noqa: E402
import remote_rows  # noqa: E402
import report  # noqa: E402
import sluice_cases  # noqa: E402


class Arithmetic(unittest.TestCase):
    def test_paired_ratio_is_median_of_per_round_ratios(self):
        r, n = harness.paired_ratio([200, 100, 300], [100, 100, 100])
        self.assertEqual((r, n), (2.0, 3))

    def test_paired_ratio_skips_missing_rounds(self):
        r, n = harness.paired_ratio([200, None, 300], [100, 100, 0])
        self.assertEqual((r, n), (2.0, 1))
        self.assertEqual(harness.paired_ratio([None], [1]), (None, 0))

    def test_rounds_alternate_order(self):
        seen = []
        harness.rounds_of([{"name": "a"}, {"name": "b"}, {"name": "c"}], 3,
                          lambda c, r: seen.append(c["name"]), lambda m: None)
        self.assertEqual(seen, list("abccbaabc"))


class Goals(unittest.TestCase):
    def summary(self, ratio_pil_224, aug_ratio_128, drift):
        return {"ratios": [{"sluice": "s", "vs": "torch_pil", "res": 224, "workers": 1,
                            "ratio": ratio_pil_224, "pairs": 3}],
                "decode": [{"case": "tj_full", "res": None, "images_per_s": 100, "n": 3, "ratio_vs_full": None},
                           {"case": "sluice_aug", "res": 128, "images_per_s": 250, "n": 3,
                            "ratio_vs_full": aug_ratio_128}],
                "loader": [{"contender": "s", "kind": "sluice", "res": 128, "workers": 2,
                            "images_per_s": 460}],
                "drift": {"drift": drift, "epochs": 5}}

    def verdict(self, goals, prefix, workers=None):
        for g in goals:
            if g["goal"].startswith(prefix) and (workers is None or g.get("workers") == workers):
                return g["met"], g["figure"]
        raise AssertionError("no goal " + prefix)

    def test_met_and_not_met(self):
        g = sluice_cases.goals(self.summary(2.5, 2.5, 0.001), [1])
        self.assertEqual(self.verdict(g, "sluice per core >= 2x", 1), (True, 2.5))
        self.assertEqual(self.verdict(g, "sluice decode+augment >= 2.0x"), (True, 2.5))
        self.assertEqual(self.verdict(g, "RSS flat"), (True, 0.1))
        self.assertEqual(self.verdict(g, "end to end"), (True, 0.92))
        g = sluice_cases.goals(self.summary(1.5, 1.9, 0.02), [1])
        self.assertEqual(self.verdict(g, "sluice per core >= 2x", 1), (False, 1.5))
        self.assertEqual(self.verdict(g, "sluice decode+augment >= 2.0x"), (False, 1.9))
        self.assertEqual(self.verdict(g, "RSS flat"), (False, 2.0))

    def test_unmeasured_is_neither_met_nor_failed(self):
        g = sluice_cases.goals({"ratios": [], "decode": [], "loader": [], "drift": None}, [1, 2])
        self.assertTrue(all(x["met"] is None for x in g))
        self.assertEqual(self.verdict(g, "sluice ahead of ffcv at 160", 2), (None, None))


class Parsers(unittest.TestCase):
    def cases(self):
        return sluice_cases.Cases("/nonexistent", "/x", None, None, 64, lambda m: None)

    def test_bench_decode_result_lines(self):
        rows = self.cases().parse_decode("(a) tjDecompress2 x 5 images/s\n", [
            {"case": "tj_full", "images_per_s": 10},
            {"case": "tj_full_packed", "images_per_s": 9.5, "ratio": 0.95},
            {"case": "sluice_aug", "res": 224, "images_per_s": 15, "ratio": 1.5},
            {"case": "sluice_stream", "res": 224, "images_per_s": 11, "ratio": 1.1},
            {"case": "size", "original_bytes": 100, "packed_bytes": 99}])
        self.assertEqual([r["case"] for r in rows], ["tj_full", "tj_full_packed", "sluice_aug", "sluice_stream"])
        self.assertEqual(rows[0], {"case": "tj_full", "res": None, "images_per_s": 10, "ratio_vs_full": None})
        self.assertEqual(rows[2], {"case": "sluice_aug", "res": 224, "images_per_s": 15, "ratio_vs_full": 1.5})
        self.assertEqual(self.cases().parse_decode("garbage\n", []), [])

    def test_efficiency_and_drift(self):
        rows = sluice_cases.Cases.parse_efficiency([
            {"case": "pipeline_1t", "res": 224, "images_per_s": 100.0},
            {"case": "loader_vs_1t", "res": 224, "workers": 2, "images_per_s": 190.0, "efficiency": 0.95}])
        self.assertEqual(rows, [{"res": 224, "workers": 2, "images_per_s": 190.0, "single_thread": 100.0,
                                 "efficiency": 0.95}])
        d = self.cases().summarize_drift({"records": [
            {"case": "rss", "epoch": 1, "rss_kb": 1010, "anon_kb": 500},
            {"case": "rss", "epoch": 0, "rss_kb": 1000, "anon_kb": 500},
            {"case": "loader", "images_per_s": 5}]})
        self.assertAlmostEqual(d["drift"], 0.01)
        self.assertEqual(d["anon_drift"], 0.0)
        self.assertIn("error", self.cases().summarize_drift({"records": []}))


    def test_binding_result_and_goal(self):
        rec = {"case": "binding_vs_c", "res": 160, "workers": 2, "pairs": 5, "ratio_median": 0.97,
               "binding_rss_kb": [10, 10]}
        b = sluice_cases.Cases.parse_binding([{"case": "epoch", "api": "c"}, rec])
        self.assertEqual(b, rec)
        self.assertIsNone(sluice_cases.Cases.parse_binding([{"case": "epoch"}]))
        base = {"ratios": [], "decode": [], "loader": [], "drift": None}
        g = sluice_cases.goals(dict(base, binding=b), [2])
        self.assertEqual(Goals.verdict(None, g, "Python binding >= 0.95"), (True, 0.97))
        g = sluice_cases.goals(dict(base, binding=dict(rec, ratio_median=0.9)), [2])
        self.assertEqual(Goals.verdict(None, g, "Python binding >= 0.95"), (False, 0.9))
        self.assertIsNone(self.cases().binding_contender(160, 2))  # no build there


    def test_levels_contender_below_224_only(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "libsluice.so")
            lv = os.path.join(d, "data.lmdb_levels")
            for f in (lib, lv):
                open(f, "w").close()
            c = sluice_cases.Cases(d, "/x", None, None, 64, lambda m: None, lmdb_levels=lv)
            at160 = c.loader_contenders(160, 1)
            self.assertEqual([x["kind"] for x in at160], ["sluice_levels"])
            self.assertIn(lv, at160[0]["cmd"])
            self.assertEqual(c.loader_contenders(224, 1), [])
            self.assertIn("lmdb_levels", c.describe()["datasets"])

    def test_baseline_rows_pair_with_the_current_build(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "libsluice.so")
            lmdb, lv = os.path.join(d, "data.lmdb"), os.path.join(d, "data.lmdb_levels")
            for f in (lib, lmdb, lv):
                open(f, "w").close()
            c = sluice_cases.Cases(d, "/x", lmdb, None, 64, lambda m: None, lmdb_levels=lv)
            at128 = c.baseline_contenders(128, 1, "sluice@abc1234")
            self.assertEqual([(x["name"], x["kind"], x["pairs_with"]) for x in at128],
                             [("sluice@abc1234_lmdb_mmap", "baseline", "sluice_lmdb_mmap"),
                              ("sluice@abc1234_lmdb_levels_mmap", "baseline", "sluice_lmdb_levels_mmap")])
            self.assertIn(d, at128[0]["cmd"][2])  # the baseline's own library
            self.assertEqual([x["name"] for x in c.baseline_contenders(224, 1, "b")], ["b_lmdb_mmap"])
            self.assertEqual(sluice_cases.Cases("/nonexistent", "/x", None, None, 64,
                                                lambda m: None).baseline_contenders(128, 1, "b"), [])
        rows = sluice_cases.baseline_decode_rows(
            [{"case": "tj_full", "res": None, "images_per_s": 100.0},
             {"case": "sluice_aug", "res": 128, "images_per_s": 300.0, "ratio_vs_full": 3.0},
             {"case": "sluice_aug", "res": 224, "images_per_s": 200.0, "ratio_vs_full": 2.0}],
            [{"case": "tj_full", "res": None, "images_per_s": 100.0},
             {"case": "sluice_aug", "res": 128, "images_per_s": 200.0, "ratio_vs_full": 2.4}])
        self.assertEqual([r["speedup"] for r in rows], [1.0, 1.5, None])
        self.assertEqual([r["speedup_vs_full"] for r in rows], [None, 1.25, None])
        su = {"loader": [{"contender": "sluice_lmdb_mmap", "res": 128, "workers": 1, "images_per_s": 150.0},
                         {"contender": "sluice@abc1234_lmdb_mmap", "res": 128, "workers": 1,
                          "images_per_s": 100.0}],
              "baseline_ratios": [{"sluice": "sluice_lmdb_mmap", "vs": "sluice@abc1234_lmdb_mmap",
                                   "label": "sluice@abc1234", "res": 128, "workers": 1, "ratio": 1.5,
                                   "cpu_ratio": 1.4, "pairs": 3}],
              "baseline_decode": {"label": "sluice@abc1234", "rows": rows}}
        text = "\n".join(report.baseline_table(su))
        self.assertIn("### Against sluice@abc1234, same run", text)
        self.assertIn("| 128 | 1 | sluice_lmdb_mmap | 150 | 100 | 1.50× (3 pairs) | 1.40× |", text)
        self.assertIn("| sluice_aug | 128 | 300 | 200 | 1.50× | 1.25× |", text)
        self.assertEqual(report.baseline_table({"loader": su["loader"]}), [])

    def test_recipe_rows_ratios_cost_and_table(self):
        got = {"sluice_rrc": [1600.0, 1500.0], "sluice_tv": [1300.0, 1250.0],
               "sluice_timm": [1100.0, None],
               "torch_pil_rrc": [400.0, 500.0], "torch_pil_tv": [260.0, 250.0],
               "torch_pil_timm": [220.0, 200.0]}
        su = sluice_cases.recipe_summary(got, 224, 1)
        r = {(x["recipe"], x["vs"]): x for x in su["ratios"]}
        self.assertAlmostEqual(r[("tv", "torch_pil")]["ratio"], (5.0 + 5.0) / 2)
        self.assertEqual(r[("timm", "torch_pil")]["pairs"], 1)
        cost = {x["recipe"]: x["cost"] for x in su["cost"]}
        self.assertAlmostEqual(cost["tv"], (1600 / 1300 + 1500 / 1250) / 2)
        g = sluice_cases.goals({"recipes": su}, [1])
        self.assertEqual(Goals.verdict(None, g, "recipe tv: sluice per core >= 5x"), (True, 5.0))
        self.assertEqual(Goals.verdict(None, g, "recipe tv costs <= 1.35x")[0], True)
        text = "\n".join(report.recipes_table({"recipes": su}))
        self.assertIn("| tv | 1275 | 1.22× | 255 (5.00×) |", text)
        self.assertEqual(report.recipes_table({}), [])

    def test_detection_rows_ratios_and_table(self):
        got = {"sluice_det_rrc": [900.0], "sluice_det_iou_crop": [600.0],
               "torch_det_rrc": [300.0], "torch_det_iou_crop": [150.0]}
        su = sluice_cases.detection_summary(got, 224, 1)
        r = {(x["crop"], x["vs"]): x["ratio"] for x in su["ratios"]}
        self.assertAlmostEqual(r[("rrc", "torch")], 3.0)
        self.assertAlmostEqual(r[("iou_crop", "torch")], 4.0)
        text = "\n".join(report.detection_table({"detection": su}))
        self.assertIn("| iou_crop | 600 | 150 (4.00×) |", text)
        self.assertEqual(report.detection_table({}), [])
        self.assertEqual(sluice_cases.detection_contenders("lib", None, 224, 1, 64), [])

    def test_levels_table(self):
        row = {"images_per_s": 100.0, "res": 160, "workers": 1}
        su = {"levels_set": "3/4,1/2",
              "loader": [dict(row, contender="sluice_lmdb_mmap", kind="sluice", per_worker=100.0),
                         dict(row, contender="sluice_lmdb_levels_mmap", kind="sluice_levels",
                              per_worker=200.0),
                         dict(row, contender="torch_pil", kind="peer", per_worker=50.0)],
              "levels_ratios": [
                  {"vs": "sluice_lmdb_mmap", "res": 160, "workers": 1, "ratio": 2.0},
                  {"vs": "torch_pil", "res": 160, "workers": 1, "ratio": 4.0}]}
        text = "\n".join(report.levels_table(su))
        self.assertIn("--levels 3/4,1/2", text)
        self.assertIn("| 160 | 1 | 200 | 100 (2.00×) | 50 (4.00×) |", text)
        self.assertEqual(report.levels_table({"loader": su["loader"][:1]}), [])


class Foreign(unittest.TestCase):
    """The foreign-layout rows: the table, the manifest, the commands, the
    paired summary, the report's table, the --rows filter, and the writers'
    bytes (with the real clients, when this interpreter has them)."""

    def test_table_matches_the_peers_and_writers(self):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "peer.py")) as f:
            peer_src = f.read()
        for f in sluice_cases.FOREIGN:
            self.assertIn(f["layout"], foreign.LAYOUTS)
            self.assertEqual(foreign.LAYOUTS[f["layout"]]["peer"], f["peer"])
            self.assertIn('"%s"' % f["peer"], peer_src)  # one of peer.py's choices
        self.assertIn("foreign", harness.SECTIONS)

    def test_manifest_contenders_and_summary(self):
        with tempfile.TemporaryDirectory() as d:
            m = os.path.join(d, "manifest")
            with open(m, "w") as f:
                f.write("msgpack /a/m.lmdb\nbogus /x\nskip tfrecord\npickle /a/p.lmdb\n\n")
            self.assertEqual(list(sluice_cases.read_manifest(m).items()),
                             [("pickle", "/a/p.lmdb"), ("msgpack", "/a/m.lmdb")])
        self.assertEqual(sluice_cases.read_manifest("/nonexistent"), {})
        c = sluice_cases.foreign_contenders("/b/libsluice.so", "pickle", "/a/p.lmdb", "/v/python", 224, 2, 64)
        self.assertEqual([x["name"] for x in c], ["sluice_pickle", "torch_folder2lmdb"])
        self.assertIn("/a/p.lmdb", c[0]["cmd"])
        self.assertEqual(c[1]["cmd"][0], "/v/python")
        self.assertEqual(c[1]["cmd"][c[1]["cmd"].index("--path") + 1], "/a/p.lmdb")
        self.assertEqual(c[1]["cmd"][c[1]["cmd"].index("--workers") + 1], "2")
        self.assertEqual(len(sluice_cases.foreign_contenders("/b/l.so", "pickle", "/p", None, 224, 1, 64)), 1)
        got = {"sluice_pickle": [{"rate": 600.0, "cpu_rate": 700.0}, {"rate": 400.0, "cpu_rate": 500.0}, None],
               "torch_folder2lmdb": [{"rate": 100.0, "cpu_rate": 100.0}, {"rate": 100.0, "cpu_rate": 125.0},
                                     {"rate": 90.0, "cpu_rate": None}]}
        row = sluice_cases.foreign_summary("pickle", 224, 2, got)
        self.assertEqual((row["ratio"], row["pairs"]), (5.0, 2))  # median of 6 and 4
        self.assertAlmostEqual(row["cpu_ratio"], (7.0 + 4.0) / 2)
        self.assertEqual(row["sluice_per_core"], 250.0)
        self.assertEqual(row["peer_per_core"], 50.0)
        text = "\n".join(report.foreign_table({"foreign": [row]}))
        self.assertIn("| 224 | 2 | in place, io=mmap |", text)
        self.assertIn("| 250 vs 50 | 600 vs 112 | 5.00× (2 pairs) |", text)
        self.assertEqual(report.foreign_table({}), [])

    def test_rows_filter(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            base = [sys.executable, harness.__file__, "--build", d, "--images", d, "--venv", d, "--out", out]
            r = subprocess.run(base + ["--rows", "foreign,nope"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("nope", r.stderr)
            subprocess.run(base + ["--rows", "foreign", "--mode", "smoke"], capture_output=True, text=True)
            with open(out) as f:
                res = json.load(f)
            self.assertEqual(res["settings"]["rows"], ["foreign"])
            self.assertEqual([x["section"] for x in res["runs"]], [])  # nothing else ran
            self.assertTrue(any(n.startswith("foreign: no foreign-layout file") for n in res["notes"]))

    def test_writers_write_what_the_tools_write(self):
        try:
            import lmdb
            import msgpack
        except ImportError:
            self.skipTest("py-lmdb or msgpack not in %s" % sys.executable)
        import pickle
        with tempfile.TemporaryDirectory() as d:
            for c, names in (("b", ["y.jpg", "x.jpg"]), ("a", ["z.png", "notes.txt"])):
                os.makedirs(os.path.join(d, "img", c))
                for n in names:
                    with open(os.path.join(d, "img", c, n), "wb") as f:
                        f.write(b"bytes of " + n.encode())
            samples = foreign.image_folder(os.path.join(d, "img"))
            self.assertEqual([(os.path.basename(p), lb) for p, lb in samples],
                             [("z.png", 0), ("x.jpg", 1), ("y.jpg", 1)])
            p = foreign.write_pickle_lmdb(samples, os.path.join(d, "p.lmdb"))
            env = lmdb.open(p, subdir=False, readonly=True, lock=False)
            with env.begin() as txn:
                self.assertEqual(pickle.loads(txn.get(b"__len__")), 3)
                self.assertEqual(pickle.loads(txn.get(b"__keys__")), [b"0", b"1", b"2"])
                self.assertEqual(pickle.loads(txn.get(b"2")), (b"bytes of y.jpg", 1))
                self.assertEqual(txn.stat()["entries"], 5)
            env.close()
            m = foreign.write_msgpack_lmdb(samples, os.path.join(d, "m.lmdb"))
            env = lmdb.open(m, subdir=False, readonly=True, lock=False)
            with env.begin() as txn:
                self.assertEqual(msgpack.loads(txn.get(b"__keys__")), [b"00000000", b"00000001", b"00000002"])
                self.assertEqual(msgpack.loads(txn.get(b"00000000")), [b"bytes of z.png", 0])
            env.close()


class Remote(unittest.TestCase):
    def summary(self, warm_local, cold_warm, best, open_s, shards=1000):
        rt = {"warm_over_local": (warm_local, 3), "cold_over_warm": (cold_warm, 3),
              "warm_per_core_vs_best_peer": (best, 3, "litdata_s3"),
              "cold_per_core_vs_best_peer": (best, 3, "wds_http"),
              "warm_per_cpu_s_vs_best_peer": None, "cold_per_cpu_s_vs_best_peer": None}
        return {"remote": {"ratios": {"1": rt}, "images": 10, "res": 224, "shards": 2, "skip": 1,
                           "order": "quasi_random", "range": False,
                           "rows": [{"contender": "sluice_cold", "workers": 1, "label": "sluice cold",
                                     "images_per_s": 100.0, "per_worker": 100.0, "images_per_cpu_s": 90.0,
                                     "process_wall_s": 1.0, "cache_mb": 5.0, "runs": [100.0, None]}],
                           "open": {"url": "s3://b/x/", "shards": shards, "samples": 2000, "cold_s": open_s,
                                    "warm_s": 0.01, "cold_runs": [open_s], "warm_runs": [0.01]}}}

    def test_goals(self):
        g = {x["goal"]: x for x in remote_rows.remote_goals(self.summary(0.96, 0.85, 3.5, 0.2))}
        self.assertTrue(g["remote: warm epoch >= 0.95x the same shards read locally"]["met"])
        self.assertFalse(g["remote: cold epoch >= 0.9x warm at one worker"]["met"])
        self.assertTrue(g["remote: sluice warm >= 3x the best peer per core"]["met"])
        self.assertIsNone(g["remote: sluice warm >= 3x the best peer per CPU-second"]["met"])
        self.assertTrue(g["remote: open of a 1,000-shard remote dataset <= 1 s on loopback"]["met"])
        g = {x["goal"]: x for x in remote_rows.remote_goals(self.summary(0.9, 0.95, 2.0, 0.2, shards=120))}
        self.assertIsNone(g["remote: open of a 1,000-shard remote dataset <= 1 s on loopback"]["met"])
        self.assertEqual(remote_rows.remote_goals({}), [])
        # the harness's goal list carries them, and the report prints seconds
        self.assertIn("remote: cold epoch >= 0.9x warm at one worker",
                      [x["goal"] for x in sluice_cases.goals(self.summary(1, 1, 1, 2.0), [1])])

    def test_table_and_range_note(self):
        md = "\n".join(remote_rows.remote_table(self.summary(1, 1, 1, 0.5), report.fmt))
        self.assertIn("### Remote datasets", md)
        self.assertIn("| sluice cold | 1 | 100 |", md)
        self.assertIn("io.remote_read = ranges", md)
        self.assertIn("s3://b/x/", md)

    def test_rows_filter_has_remote(self):
        self.assertIn("remote", harness.SECTIONS)


class Processes(unittest.TestCase):
    def test_result_lines_memory_and_failure(self):
        code = ("import json,subprocess,sys;b=bytearray(64<<20);b[::4096]=b'x'*len(b[::4096]);"
                "subprocess.run([sys.executable,'-c','import time;b=bytearray(32<<20);"
                "b[::4096]=bytes(len(b[::4096]));time.sleep(0.5)']);"
                "print('noise');print('RESULT '+json.dumps({'images_per_s':5}))")
        r = harness.run_process([sys.executable, "-c", code], {}, 60, lambda m: None)
        self.assertEqual(r["rc"], 0)
        self.assertEqual(r["records"], [{"images_per_s": 5}])
        self.assertGreater(r["peak_rss_mb"], 64 + 32)  # parent and child, summed
        self.assertGreater(r["maxrss_mb"], 64)
        self.assertGreater(r["peak_anon_mb"], 64 + 32)
        r = harness.run_process([sys.executable, "-c", "import sys; sys.exit('broken')"], {}, 60,
                                lambda m: None)
        self.assertEqual(r["rc"], 1)
        self.assertIn("broken", r["stderr_tail"])
        self.assertEqual(r["records"], [])

    def test_timeout_kills(self):
        r = harness.run_process([sys.executable, "-c", "import time; time.sleep(30)"], {}, 0.5,
                                lambda m: None)
        self.assertTrue(r["timed_out"])
        self.assertNotEqual(r["rc"], 0)


class CpuTime(unittest.TestCase):
    def test_counts_live_children(self):
        import subprocess
        import time
        c0 = cputime.tree_cpu_seconds()
        child = subprocess.Popen([sys.executable, "-c", "import time\nt=time.time()\nwhile time.time()-t<1.5: pass"])
        try:
            time.sleep(1.0)
            self.assertGreater(cputime.tree_cpu_seconds() - c0, 0.1)  # the child's, while it runs
        finally:
            child.wait()


class Report(unittest.TestCase):
    def test_benchmarks_section_is_replaced_not_appended(self):
        res = {"date": "2026-01-01T00:00:00Z", "mode": "full",
               "machine": {"cpu": "x", "cpus": 2, "host": "h"},
               "settings": {"image_count": 1, "image_bytes": 1000, "images": "/a/b", "transform": "t",
                            "batch": 64, "rounds": 3, "env": {"A": "1"}, "nice": 5},
               "peers": {"ffcv": {"status": "not installed", "error": "boom | bad"}},
               "summary": {"goals": [], "decode": [], "loader": [], "drift": None}, "errors": []}
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "bench", "results"))
            jp = os.path.join(d, "bench", "results", "r.json")
            with open(jp, "w") as f:
                json.dump(res, f)
            bm = os.path.join(d, "BENCHMARKS.md")
            with open(bm, "w") as f:
                f.write("# intro\n\n%s\nold\n%s\ntail\n" % (report.BEGIN, report.END))
            for _ in range(2):
                report.update_benchmarks(bm, res, [jp[:-5] + "-loader.png"], None, jp)
            with open(bm) as f:
                text = f.read()
            self.assertEqual(text.count(report.BEGIN), 1)
            self.assertNotIn("old", text)
            self.assertTrue(text.startswith("# intro") and text.rstrip().endswith("tail"))
            self.assertIn("](bench/results/r-loader.png)", text)
            self.assertIn("boom \\| bad", text)
            # The latest tables only; every table in the run's own report.
            self.assertIn("](bench/results/r.md)", text)
            self.assertNotIn("### Single thread", text)


if __name__ == "__main__":
    unittest.main(verbosity=1)
