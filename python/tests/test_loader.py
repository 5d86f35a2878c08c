"""The binding's loader: options, errors, zero copy, holding, sharding."""

import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import sluice
from conftest import N_SAMPLES, base_options


def fnv1a(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def test_short_names_and_dict_keys(opts):
    with sluice.Loader(opts(), batch_size=4, prefetch=2) as ld:
        assert len(ld) == N_SAMPLES // 4  # drop_last by default
        assert ld.stats()["prefetch"] == 2
        assert ld.resolution(0) == 32
        b = ld.epoch(0).__next__()
        assert b.n == 4 and b.valid == 4 and b.resolution == (32, 32)


def test_stats_keys(opts):
    # The dict is built from SL_LOADER_STATS_FIELDS: every field of
    # sl_loader_stats, level_decodes one key per level, bad as a list.
    with sluice.Loader(opts(), batch_size=4) as ld:
        s = ld.stats()
    assert set(s) == {
        "epoch", "batches", "samples", "skipped", "failed", "bad",
        "bytes_read", "read_ns", "decode_ns", "augment_ns",
        "staging_wait_ns", "slot_wait_ns", "consumer_wait_ns",
        "epoch_batches", "epoch_seconds", "images_per_s", "workers",
        "backend", "backend_note", "jpeg_samples", "jpeg_windowed",
        "chunk_unfilters", "boxes_over", "box_samples_over",
        "level0_decodes", "level1_decodes", "level2_decodes",
        "level3_decodes", "left_out", "left_out_files", "dlpack_exports",
        "dlpack_deleted", "batches_held", "prefetch", "fetches",
        "bytes_fetched", "cache_hits", "cache_misses", "fetch_wait_ns"}
    assert s["bad"] == [] and s["backend"] in ("host", "cuda")
    assert isinstance(s["epoch_seconds"], float)


@pytest.mark.parametrize("bad, fragment", [
    ({"batch_size": 0}, "loader.batch_size"),
    ({"workers": "many"}, "loader.workers"),
    ({"loader.batch_sise": 8}, "loader.batch_size"),  # the C suggestion
    ({"augment_dtype": "int7"}, "augment.dtype"),
    ({"rank": 3, "world_size": 2}, "loader.rank"),
])
def test_bad_options_raise_config_error_with_c_message(opts, bad, fragment):
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(opts(), **bad)
    assert fragment in str(e.value)
    assert isinstance(e.value, sluice.Error)
    assert e.value.status == 5


def test_bad_dataset_raises_with_c_message(tmp_path):
    junk = tmp_path / "junk.lmdb"
    junk.write_bytes(b"not a dataset" * 100)
    with pytest.raises(sluice.Error) as e:
        sluice.Loader({"dataset.path": str(junk)})
    assert "junk.lmdb" in str(e.value)
    with pytest.raises(sluice.Error):
        sluice.Loader({"dataset.path": str(tmp_path / "missing.lmdb")})
    with pytest.raises(sluice.Error):
        sluice.Dataset(str(junk))


def test_each_module_object_has_its_own_state(tmp_path):
    # The extension keeps no process-wide state: a second module object
    # made from the same file (as a second interpreter would) has its own
    # exception types, and each module's objects raise their own.
    import importlib.util

    from sluice import _sluice as first
    spec = importlib.util.find_spec("sluice._sluice")
    second = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(second)
    assert second is not first and second.Error is not first.Error
    missing = str(tmp_path / "missing.lmdb")
    for mod, other in ((first, second), (second, first)):
        with pytest.raises(mod.Error) as e:
            mod._Loader(missing, [])
        assert not isinstance(e.value, other.Error)
        with pytest.raises(mod.Error):
            mod._Dataset(missing)


def test_zero_copy_numpy(opts):
    with sluice.Loader(opts()) as ld:
        for b in ld.epoch(0):
            a = np.from_dlpack(b.images)
            assert a.ctypes.data == b.data_ptr == b.images.data_ptr
            assert a.shape == (8, 3, 32, 32) and a.dtype == np.uint8
            m = np.asarray(memoryview(b.images))  # the buffer protocol
            assert m.ctypes.data == b.data_ptr
            lab = np.from_dlpack(b.labels)
            assert lab.dtype == np.int32 and lab.shape == (8,)
            idx = np.from_dlpack(b.indices)
            assert idx.dtype == np.int64
            assert memoryview(b.indices).format == "q"
            assert b.indices.dtype == "int64"
            t = np.from_dlpack(b.targets)
            assert t.shape == (8, 2)
            assert np.array_equal(t[:, 0], idx.astype(np.float32))
            break


def test_zero_copy_torch(opts):
    torch = pytest.importorskip("torch")
    with sluice.Loader(opts()) as ld:
        for b in ld.epoch(0):
            x = torch.from_dlpack(b.images)
            assert x.data_ptr() == b.data_ptr
            assert tuple(x.shape) == (8, 3, 32, 32)
            y = torch.from_dlpack(b.labels)
            assert y.dtype == torch.int32
            # torch before 2.3 has no uint64: "Unsupported kUInt bits 64".
            i = torch.from_dlpack(b.indices)
            assert i.dtype == torch.int64 and tuple(i.shape) == (8,)
            assert i.tolist() == memoryview(b.indices).tolist()
            break


def test_two_stream_exports_hold_the_slot_for_both(opts):
    # issue 25: one device batch exported on streams S1 then S2; S1 still
    # reads it (a sleep queued before its copy) when the batch is dropped.
    # The release must wait for S1 too, or the next batch (one slot:
    # device.prefetch = 1) is written over what S1 then copies. Needs a GPU
    # and torch with CUDA (skipped otherwise).
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    from torch.utils.dlpack import from_dlpack
    o = opts(**{"device.backend": "cuda", "device.prefetch": 1,
                "loader.order": "sequential"})
    with sluice.Loader(o) as ld:
        ld.set_epoch(0)
        b = ld.next()
        s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
        x1 = from_dlpack(b.images.__dlpack__(stream=s1.cuda_stream))
        x2 = from_dlpack(b.images.__dlpack__(stream=s2.cuda_stream))
        with torch.cuda.stream(s2):
            want = x2.clone()
        s2.synchronize()
        with torch.cuda.stream(s1):
            torch.cuda._sleep(2_000_000_000)  # ~1 s of GPU cycles
            got = x1.clone()
        del x1, x2, b
        nb = ld.next()  # rewrites the one slot once its release passes
        s1.synchronize()
        assert torch.equal(got, want)
        del nb


def test_sluice_torch_helper(opts):
    pytest.importorskip("torch")
    import sluice.torch as st
    with sluice.Loader(opts()) as ld:
        n = sum(1 for _ in st.batches(ld, 0))
        assert n == len(ld)


def test_sluice_torch_copy_gives_owned_tensors(opts):
    torch = pytest.importorskip("torch")
    import sluice.torch as st
    # Holding every batch of an epoch, more than device.prefetch: only
    # owned copies make that possible, and they match the views' bytes.
    with sluice.Loader(opts(**{"device.prefetch": 2})) as ld:
        views = [torch.from_dlpack(b.images).clone() for b in ld.epoch(0)]
        kept = list(st.batches(ld, 0, copy=True))
        assert len(kept) == len(ld) > 2
        assert ld.stats()["batches_held"] == 0
        for (images, labels), v in zip(kept, views):
            assert torch.equal(images, v)
            assert labels.dtype == torch.int32


def test_same_bytes_as_c_loader(opts, c_batches):
    o = opts(**{"loader.drop_last": "false"})
    args = [c_batches, "1"] + ["%s=%s" % kv for kv in o.items()]
    ref = subprocess.run(args, check=True, capture_output=True,
                         text=True).stdout.split("\n")
    ref = [line for line in ref if line]
    got = []
    with sluice.Loader(o) as ld:
        for b in ld.epoch(1):
            got.append("%d %d %016x %016x %016x" % (
                b.index, b.valid,
                fnv1a(memoryview(b.images).cast("B")),
                fnv1a(memoryview(b.labels).cast("B")),
                fnv1a(memoryview(b.indices).cast("B"))))
    assert got == ref
    assert int(ref[-1].split()[1]) < 8  # the padded last batch matched too


def test_deleter_called_exactly_once(opts):
    with sluice.Loader(opts()) as ld:
        it = ld.epoch(0)
        b = next(it)
        cap = b.images.__dlpack__()
        del cap  # never consumed: the capsule deletes it
        a = np.from_dlpack(b.images)
        c = np.from_dlpack(b.labels)
        s = ld.stats()
        assert s["dlpack_exports"] == 3 and s["dlpack_deleted"] == 1
        del a, c
        s = ld.stats()
        assert s["dlpack_deleted"] == 3
        # a consumed capsule cannot be consumed twice
        cap = b.labels.__dlpack__()
        np.from_dlpack(type("X", (), {
            "__dlpack__": lambda self, **k: cap,
            "__dlpack_device__": lambda self: (1, 0)})())
        with pytest.raises(Exception):
            np.from_dlpack(type("X", (), {
                "__dlpack__": lambda self, **k: cap,
                "__dlpack_device__": lambda self: (1, 0)})())
        del cap, b
        import gc
        gc.collect()
        s = ld.stats()
        assert s["dlpack_exports"] == s["dlpack_deleted"] == 4


def test_versioned_capsule(opts):
    with sluice.Loader(opts()) as ld:
        b = next(ld.epoch(0))
        cap = b.images.__dlpack__(max_version=(1, 0))
        assert "dltensor_versioned" in repr(cap)
        cap = b.images.__dlpack__(max_version=(0, 8))
        assert "dltensor_versioned" not in repr(cap)
        del cap
        assert b.images.__dlpack_device__() == (1, 0)
        with pytest.raises(BufferError):
            b.images.__dlpack__(stream=5)  # host memory takes no stream


def test_held_batch_never_rewritten(opts):
    with sluice.Loader(opts(**{"device.prefetch": 3})) as ld:
        it = ld.epoch(0)
        held = next(it)
        a = np.from_dlpack(held.images)
        snapshot = a.copy()
        idx = np.from_dlpack(held.indices).copy()
        del held  # only the array holds the slot now
        for _ in range(len(ld) - 1):
            b = next(it)
            assert b.data_ptr != a.ctypes.data
            del b
        assert np.array_equal(a, snapshot)
        del it  # a suspended iterator holds the batch it last gave
        # and across the next epoch too
        for b in ld.epoch(1):
            assert b.data_ptr != a.ctypes.data
        assert np.array_equal(a, snapshot)
        assert idx.shape == (8,)


def test_holding_too_many_raises(opts):
    with sluice.Loader(opts(**{"device.prefetch": 2})) as ld:
        it = ld.epoch(0)
        held = [next(it), next(it)]
        with pytest.raises(sluice.StateError) as e:
            next(it)
        assert "device.prefetch" in str(e.value)
        assert "slots are held" in str(e.value)  # the C message
        del held
        ld.set_epoch(0)
        assert sum(1 for _ in ld) == len(ld)


def _threads():
    return len(os.listdir("/proc/self/task"))


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_early_break_leaves_threads_and_rss_flat(opts):
    base_threads = _threads()
    with sluice.Loader(opts()) as ld:
        running = _threads()
        for e in range(30):
            for b in ld.epoch(e):
                np.from_dlpack(b.images)
                break
        rss0 = _rss_kib()
        for e in range(1000):
            for b in ld.epoch(e % 7):
                x = np.from_dlpack(b.images)
                break
            del x
        assert _threads() == running
        assert _rss_kib() - rss0 < 8 * 1024
        s = ld.stats()
        assert s["dlpack_exports"] == s["dlpack_deleted"]
    del b  # the last batch keeps the closed loader's threads until freed
    # a loader dropped while iterating: its threads go
    ld = sluice.Loader(opts())
    it = ld.epoch(0)
    next(it)
    del it, ld
    import gc
    gc.collect()
    for _ in range(50):
        if _threads() == base_threads:
            break
        time.sleep(0.05)
    assert _threads() == base_threads


def test_view_outlives_close(opts):
    ld = sluice.Loader(opts())
    b = next(ld.epoch(0))
    a = np.from_dlpack(b.images)
    snapshot = a.copy()
    del b
    ld.close()
    with pytest.raises(sluice.StateError):
        ld.next()
    assert np.array_equal(a, snapshot)  # the slot is still alive
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    del a  # the last view: the C loader closes now


def test_deleter_on_another_thread(opts):
    torch = pytest.importorskip("torch")
    with sluice.Loader(opts()) as ld:
        b = next(ld.epoch(0))
        x = torch.from_dlpack(b.images)
        del b
        box = [x]
        del x
        t = threading.Thread(target=box.clear)
        t.start()
        t.join()
        s = ld.stats()
        assert s["dlpack_exports"] == s["dlpack_deleted"]
        assert sum(1 for _ in ld.epoch(1)) == len(ld)


RESUME = r"""
import json, sys
sys.path[:0] = sys.argv[3:4]
import sluice
from conftest import base_options
o = base_options(sys.argv[1])
state = {"format": "sluice.Loader/1", "state": bytes.fromhex(sys.argv[2])}
with sluice.Loader(o) as ld:
    ld.load_state_dict(state)
    print(json.dumps([list(map(int, memoryview(b.indices).tolist()))
                      for b in ld]))
"""


def test_resume_in_a_new_process(dataset):
    o = base_options(dataset)
    with sluice.Loader(o) as ld:
        full = [memoryview(b.indices).tolist() for b in ld.epoch(2)]
        ld.set_epoch(2)
        for _ in range(3):
            ld.next()
        st = ld.state_dict()
    import json
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        [sys.executable, "-c", RESUME, dataset, st["state"].hex(), here],
        check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == full[3:]


def test_load_state_dict_refuses_other_settings(opts):
    with sluice.Loader(opts()) as ld:
        ld.set_epoch(0)
        ld.next()
        st = ld.state_dict()
    with sluice.Loader(opts(**{"loader.seed": 8})) as other:
        with pytest.raises(sluice.StateError):
            other.load_state_dict(st)
    with pytest.raises(sluice.Error):
        other.load_state_dict({"nope": 1})


def test_simulated_ranks_disjoint_and_covering(opts):
    world = 3
    seen = []
    lens = set()
    for r in range(world):
        with sluice.Loader(opts(**{"loader.drop_last": "false"}),
                           rank=r, world_size=world) as ld:
            lens.add(len(ld))
            for b in ld.epoch(4):
                idx = memoryview(b.indices).tolist()
                seen += idx[:b.valid]
    assert len(lens) == 1
    assert sorted(seen) == list(range(N_SAMPLES))


def test_rank_world_from_env(opts, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with sluice.Loader(opts()) as a:
        ia = [memoryview(b.indices).tolist() for b in a.epoch(0)]
    with sluice.Loader(opts(), rank=1, world_size=2) as b:
        ib = [memoryview(x.indices).tolist() for x in b.epoch(0)]
        nb = len(b)
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    with sluice.Loader(opts()) as c:
        assert len(c) > nb
    assert ia == ib


def test_gil_released_while_next_waits(opts):
    # One worker making large batches, consumed at once: next waits on most
    # calls, and a second Python thread must run during those waits (its
    # progress counted across each next call). How long next waits depends
    # on the machine (the spinning thread slows the consumer too), so epochs
    # go on until the waits add up to a tenth of a second: the check is on
    # the progress made during them, never on a time.
    o = opts(**{"loader.workers": 1, "resolution.max": 768,
                "loader.batch_size": 32})
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    waited_total, during_total = 0.0, 0
    with sluice.Loader(o) as ld:
        t = threading.Thread(target=spin)
        t.start()
        for e in range(200):
            ld.set_epoch(e)
            while True:
                before = ticks[0]
                t0 = time.perf_counter()
                b = ld.next()
                waited = time.perf_counter() - t0
                during = ticks[0] - before
                if b is None:
                    break
                del b
                if waited > 0.002:
                    waited_total += waited
                    during_total += during
            if waited_total > 0.1:
                break
        stop.set()
        t.join()
    assert waited_total > 0.1, "next never waited long: %r" % waited_total
    assert during_total > 1000, (during_total, waited_total)


def test_close_from_another_thread_while_calls_are_in_flight(dataset):
    # issue 25: 200 rounds of next/decode/read/stats racing close(); every
    # call after close raises StateError, none touches freed memory (the
    # sanitizer builds run close_race.py alone, python/CMakeLists.txt).
    import close_race
    assert close_race.run(dataset, rounds=200) == 200


def test_dataset(dataset):
    ds = sluice.Dataset(dataset)
    assert len(ds) == N_SAMPLES
    assert ds.class_names == ["class%d" % k for k in range(5)]
    px, label, targets = ds[7]
    info = ds.info(7)
    assert px.shape == (info["height"], info["width"], 3)
    assert px.dtype == np.uint8
    assert label == 7 % 5 and targets == [7.0, -3.5]
    assert bytes(px.tobytes()) == ds.read(7)  # raw samples store pixels
    with pytest.raises(IndexError):
        ds[N_SAMPLES]
    assert ds[-1][1] == (N_SAMPLES - 1) % 5


@pytest.fixture(scope="module")
def big_samples(tmp_path_factory):
    """Four 12 MiB samples: each read or decode copies for milliseconds."""
    path = str(tmp_path_factory.mktemp("big") / "big.lmdb")
    w = sluice.Writer(path)
    for i in range(4):
        w.add_pixels(bytes([i]) * (2048 * 2048 * 3), 2048, 2048, 3, label=i)
    w.commit()
    w.close()
    return path


@pytest.mark.parametrize("call", ["read", "__getitem__"])
def test_dataset_io_lets_other_threads_run(big_samples, call):
    # issue 25: read() and ds[i] give the GIL up around their I/O. With
    # the switch interval at an hour the GIL changes hands only where a
    # thread gives it up, so the other thread counts only while those calls
    # have given it up: 0 if they held it. The samples are big so that each
    # call stays out long after the other thread is woken (a call that
    # returned first could take the GIL back before it ran).
    ds = sluice.Dataset(big_samples)
    fn = getattr(ds, call)
    ticks, stop = [0], [False]
    started = threading.Event()

    def other():
        started.set()
        while not stop[0]:
            ticks[0] += 1
            time.sleep(0)  # gives the GIL back at once

    old = sys.getswitchinterval()
    t = threading.Thread(target=other)
    sys.setswitchinterval(3600)
    try:
        t.start()
        started.wait()
        before = ticks[0]
        for _ in range(10):
            for i in range(len(ds)):
                fn(i)
        during = ticks[0] - before
    finally:
        stop[0] = True
        sys.setswitchinterval(old)
    t.join()
    ds.close()
    assert during > 0


def _tiny_png(w, h):
    """A w x h gray PNG made with zlib (the PNG format's own deflate)."""
    import struct
    import zlib

    def chunk(kind, data):
        body = kind + data
        return (struct.pack(">I", len(data)) + body +
                struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + bytes(range(w)) for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_boxes_round_trip(tmp_path):
    # Boxes written through Writer.add_encoded(boxes=...) come back from
    # Dataset.boxes bit for bit (float32), with their count in info().
    png = _tiny_png(8, 6)
    path = str(tmp_path / "boxes.lmdb")
    w = sluice.Writer(path)
    boxes = [(0.5, 1.25, 10.0, 12.0, 2, 1), (-3.0, 0.0, 4.0, 4.0, 0)]
    w.add_encoded(png, label=-1, boxes=boxes)
    w.add_encoded(png, label=1)
    with pytest.raises(sluice.Error):
        w.add_encoded(png, boxes=[(5.0, 0.0, 1.0, 1.0, 0)])  # x0 > x1
    w.commit()
    w.close()
    ds = sluice.Dataset(path)
    assert ds.boxes(0) == [(0.5, 1.25, 10.0, 12.0, 2, 1),
                           (-3.0, 0.0, 4.0, 4.0, 0, 0)]
    assert ds.info(0)["box_count"] == 2
    assert ds.boxes(1) == [] and ds.info(1)["box_count"] == 0
    assert len(ds.class_names) == 3  # box label 2
    ds.close()


def test_writer_errors(tmp_path):
    w = sluice.Writer(str(tmp_path / "x.lmdb"))
    with pytest.raises(sluice.Error):
        w.add_encoded(b"not an image")
    with pytest.raises(ValueError):
        w.add_pixels(b"abc", 2, 2, 3)
    w.close()
    assert not (tmp_path / "x.lmdb").exists()


def test_python_m_sluice_runs_the_command():
    out = subprocess.run([sys.executable, "-m", "sluice", "--version"],
                         capture_output=True, text=True)
    assert out.returncode == 0
    assert sluice.version() in out.stdout + out.stderr


def test_stats_from_another_thread_while_next_waits(opts):
    o = opts(**{"loader.workers": 1, "resolution.max": 256})
    errors = []
    with sluice.Loader(o) as ld:
        ld.set_epoch(0)
        stop = threading.Event()

        def poll():
            try:
                while not stop.is_set():
                    ld.stats()
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        t = threading.Thread(target=poll)
        t.start()
        n = sum(1 for _ in ld)
        stop.set()
        t.join(10)
        assert not t.is_alive()
        assert n == len(ld)
    assert not errors


def test_pack_runs_the_command(tmp_path):
    if not os.environ.get("SLUICE_BIN"):
        pytest.skip("SLUICE_BIN not set")
    src = tmp_path / "img"
    subprocess.run([os.environ["SLUICE_BIN"], "synth", str(src), "--count",
                    "12", "--classes", "3"], check=True, capture_output=True)
    seen = []
    summary = sluice.pack(src, tmp_path / "p.lmdb",
                          progress=lambda d, t: seen.append((d, t)))
    assert "packed 12" in summary
    assert seen and seen[-1] == (12, 12)
    assert all(t == 12 and 0 <= d <= 12 for d, t in seen)
    ds = sluice.Dataset(str(tmp_path / "p.lmdb"))
    assert len(ds) == 12 and len(ds.class_names) == 3
    # The default bar (tqdm or a plain line) and no bar at all also pack.
    sluice.pack(src, tmp_path / "p2.lmdb")
    sluice.pack(src, tmp_path / "p3.lmdb", "--threads", "1", progress=False)
    assert len(sluice.Dataset(str(tmp_path / "p3.lmdb"))) == 12
    with pytest.raises(sluice.Error) as e:
        sluice.pack(tmp_path / "missing", tmp_path / "q.lmdb")
    assert "missing" in str(e.value) and "progress " not in str(e.value)


def test_writer_levels_and_level_stats(tmp_path):
    exe = os.environ.get("SLUICE_BIN")
    if not exe or not os.path.exists(exe):
        pytest.skip("SLUICE_BIN (the sluice command) not set")
    src = tmp_path / "img"
    subprocess.run([exe, "synth", str(src), "--count", "6", "--classes", "2",
                    "--imagenet"], check=True, capture_output=True)
    files = sorted(p for p in src.rglob("*.jpg"))
    assert len(files) == 6
    path = str(tmp_path / "levels.lmdb")
    w = sluice.Writer(path, levels=8)  # bit 3: 4/8 = 1/2
    for i, f in enumerate(files):
        w.add_encoded(f.read_bytes(), label=i % 2)
    w.commit()
    w.close()
    ds = sluice.Dataset(path)
    assert all(ds.info(i)["codec"] == 7 for i in range(len(ds)))
    o = base_options(path, **{"resolution.max": 96, "loader.batch_size": 2})
    with sluice.Loader(o) as ld:
        n = sum(b.n for b in ld.epoch(0))
        s = ld.stats()
    levels = [s["level%d_decodes" % k] for k in range(4)]
    assert s["chunk_unfilters"] == 0  # an LMDB: no HDF5 chunks
    assert sum(levels) == s["samples"] == n == 6
    assert levels[1] > 0  # 96 px crops of 500x375 images: most from 1/2


def test_next_starts_epoch_0_as_iteration_does(opts):
    with sluice.Loader(opts(order="sequential")) as ld:
        b = ld.next()  # no epoch started: epoch 0, as iter(ld) does
        assert b is not None and b.epoch == 0 and b.index == 0
        del b
    with sluice.Loader(opts(order="sequential")) as ld:
        assert next(iter(ld)).epoch == 0
        ld.set_epoch(3)
        assert ld.next().epoch == 3
    # The C-level call says the Python names, not sl_loader_start_epoch.
    with sluice.Loader(opts()) as ld:
        with pytest.raises(sluice.StateError) as e:
            ld._c.next()
        assert "set_epoch(e)" in str(e.value)
        assert "sl_loader_start_epoch" not in str(e.value)


@pytest.mark.parametrize("bad", [-1, 2 ** 64, 1.5, "3", None, True])
def test_bad_epoch_says_what_it_takes(opts, bad):
    with sluice.Loader(opts()) as ld:
        for call in (ld.set_epoch, ld.epoch, ld.resolution):
            with pytest.raises(sluice.InvalidArgumentError) as e:
                call(bad)
            assert "epoch must be an integer" in str(e.value)
        assert ld.resolution(np.int64(2)) == 32


def test_version_and_option_names():
    assert sluice.__version__ == sluice.version()
    assert sluice.__version__.count(".") == 2
    names = sluice.option_names()
    assert names["batch_size"] == "loader.batch_size"
    assert names["augment_layout"] == "augment.layout"
    assert names["loader_batch_size"] == "loader.batch_size"
    keys = {o[0] for o in sluice.options()}
    assert set(names.values()) == keys
    # Every name listed is one Loader takes.
    assert "path" not in names or names["path"] == "dataset.path"


def test_dataset_name(dataset):
    with sluice.Dataset(dataset) as ds:
        assert ds.name(0) == "s000.raw"
        assert ds.name(-1) == "s%03d.raw" % (len(ds) - 1)
        with pytest.raises(IndexError):
            ds.name(len(ds))


def test_ini_errors_all_in_one_config_error(tmp_path):
    # Every bad line and every failed relation, in one exception; the
    # INI's relative dataset.path is its folder's.
    bad = "".join("no_such_%02d = 1\n" % i for i in range(30))
    ini = tmp_path / "bad.ini"
    ini.write_text("[dataset]\npath = d.lmdb\n[augment]\nscale = 0.9, 0.1\n"
                   "[loader]\n" + bad)
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(str(ini))
    msg = str(e.value)
    for i in range(30):
        assert "bad.ini:%d: unknown key 'loader.no_such_%02d'" % (6 + i, i) in msg
    assert "augment.scale: the lower bound (0.9)" in msg
    assert "more error" not in msg


def test_import_sluice_gives_sluice_augment():
    # issue 40: the README calls sluice.augment.apply after a plain
    # `import sluice`; a fresh interpreter, so no test's own import helps.
    code = ("import sluice, numpy as np\n"
            "img = np.zeros((4, 4, 3), np.uint8)\n"
            "out = sluice.augment.apply('hflip', img)\n"
            "print(out.shape)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "(4, 4, 3)"


def test_enum_value_typo_suggests_the_choice(opts):
    # issue 40: a value typo gets "did you mean" as a key typo does.
    with pytest.raises(sluice.ConfigError, match=r"did you mean trivial\?"):
        sluice.Loader(opts(), augment_auto="trivialaugment")


@pytest.mark.parametrize("key,value,named", [
    ("augment.erasing", 0.25, "augment.erasing"),
    ("augment.flip", 0.0, "augment.flip"),
    ("augment.auto", "trivial", "augment.auto"),
])
def test_state_error_names_only_the_settings_that_differ(opts, key, value,
                                                        named):
    # Issue 40: changing augment.erasing gave a StateError listing crop,
    # flip, mean, std and filter, and not erasing.
    with sluice.Loader(opts()) as ld:
        ld.set_epoch(0)
        state = ld.state_dict()
    with sluice.Loader(opts(**{key: value})) as ld:
        with pytest.raises(sluice.StateError) as e:
            ld.load_state_dict(state)
    msg = str(e.value)
    assert named in msg
    for other in ("crop", "flip", "mean", "std", "filter", "erasing",
                  "mixup", "auto"):
        if other not in key:
            assert other not in msg, msg


def _valid(b):
    return memoryview(b.indices).tolist()[:b.valid]


def _elastic_save(opts, drop_last, k=2):
    """2 ranks read k batches of epoch 1 each and save: the samples read,
    the states of both ranks, and the batches a rank had per epoch."""
    read, states = [], []
    for r in range(2):
        with sluice.Loader(opts(**{"loader.drop_last": drop_last}),
                           rank=r, world_size=2) as ld:
            ld.set_epoch(1)
            for _ in range(k):
                read += _valid(ld.next())
            states.append(ld.state_dict())
            nb = len(ld)
    return read, states, nb


def _elastic_rest(opts, drop_last, states, world, workers=2):
    """The rest of epoch 1 on `world` ranks: each rank's batches' indices
    and valid counts, and the rank's len()."""
    out = []
    for r in range(world):
        with sluice.Loader(opts(**{"loader.drop_last": drop_last,
                                   "loader.workers": workers}),
                           rank=r, world_size=world) as ld:
            ld.load_state_dict(states[r % 2])
            n = len(ld)
            got = [(memoryview(b.indices).tolist(), b.valid) for b in ld]
            assert ld.current_epoch == 1
            out.append((got, n))
    return out


@pytest.mark.parametrize("world", [1, 3, 4])
def test_elastic_resume_covers_the_epoch_once(opts, world):
    read, states, nb = _elastic_save(opts, "false")
    st = states[1]
    assert (st["epoch"], st["batches"], st["rank"], st["world_size"],
            st["batch_size"]) == (1, 2, 1, 2, 8)
    assert st["samples_read"] == len(read) == 32
    assert st["samples_left"] == N_SAMPLES - 32
    assert sluice.state_info(st)["samples_left"] == N_SAMPLES - 32
    rest = _elastic_rest(opts, "false", states, world)
    seen = list(read)
    for got, n in rest:
        assert n == len(got) == -(-(N_SAMPLES - 32) // (world * 8))
        for idx, valid in got:
            seen += idx[:valid]
    assert sorted(seen) == list(range(N_SAMPLES))
    # A second resume from the same state, other workers: the same batches.
    assert _elastic_rest(opts, "false", states, world, workers=3) == rest


@pytest.mark.parametrize("world", [1, 3, 4])
def test_elastic_resume_drop_last(opts, world):
    """With drop_last, the rest's last (rest mod world x batch) samples are
    dropped, besides the epoch's own dropped tail; none is read twice."""
    read, states, nb = _elastic_save(opts, "true")
    left = 2 * (nb - 2) * 8
    assert states[0]["samples_left"] == left
    rest = _elastic_rest(opts, "true", states, world)
    seen = list(read)
    for got, n in rest:
        assert n == len(got) == left // (world * 8)
        for idx, valid in got:
            assert valid == 8
            seen += idx
    assert len(seen) == len(set(seen))
    assert len(seen) == N_SAMPLES - (N_SAMPLES - 2 * nb * 8) - left % (world * 8)


@pytest.mark.parametrize("worlds", [(3, 4), (1, 3), (4, 1, 2)])
def test_elastic_resume_again_covers_the_epoch_once(opts, worlds):
    """Preempted again in the resumed epoch: 2 ranks read 2 batches each,
    then each world of `worlds` reads one batch a rank and saves, and the
    last reads the rest: every sample of the epoch once."""
    keep = {"loader.drop_last": "false"}
    seen, states, _ = _elastic_save(opts, "false")
    state = states[0]
    for n, world in enumerate(worlds):
        last = n == len(worlds) - 1
        saved = []
        for r in range(world):
            with sluice.Loader(opts(**keep), rank=r, world_size=world) as ld:
                ld.load_state_dict(state)
                if last:
                    for b in ld:
                        seen += _valid(b)
                    continue
                b = ld.next()
                if b is not None:
                    seen += _valid(b)
                del b
                saved.append(ld.state_dict())
        if not last:
            state = saved[-1]
            assert state["resumes"] == n + 1
    assert sorted(seen) == list(range(N_SAMPLES))


def test_elastic_resume_before_the_first_batch(opts):
    """A state saved before any batch of the epoch, restored on another
    world size: the whole epoch dealt there, as a fresh one would be (with
    drop_last, nothing of the old world's dealing dropped), no resume
    counted."""
    keep = {"loader.drop_last": "true"}
    with sluice.Loader(opts(**keep), rank=0, world_size=4) as ld:
        ld.set_epoch(1)
        state = ld.state_dict()
    with sluice.Loader(opts(**keep), rank=0, world_size=1) as ld:
        fresh = len(ld)
        ld.load_state_dict(state)
        assert len(ld) == fresh
        assert ld.state_dict()["resumes"] == 0


def test_elastic_resume_later_epochs_and_refusals(opts):
    keep = {"loader.drop_last": "false"}
    _, states, _ = _elastic_save(opts, "false")
    with sluice.Loader(opts(**keep), rank=0, world_size=3) as ld:
        ld.load_state_dict(states[0])
        next(iter(ld))
        mid = ld.state_dict()
        assert mid["resumed_from_world"] == 2 and mid["world_size"] == 3
        ld.set_epoch(2)
        assert len(ld) == -(-N_SAMPLES // (3 * 8))
    assert mid["resumes"] == 1
    # Other settings still refuse, naming only what differs.
    with sluice.Loader(opts(**keep, **{"loader.seed": 8}),
                       world_size=3) as ld:
        with pytest.raises(sluice.StateError) as e:
            ld.load_state_dict(states[0])
        assert "loader.seed" in str(e.value)
        assert "world_size" not in str(e.value)
    with pytest.raises(sluice.InvalidArgumentError):
        sluice.state_info(b"nope")
