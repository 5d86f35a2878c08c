"""close() on one thread racing next() / decode() / read() / stats() on
another (issue 25): each round opens a loader and a dataset, starts a
consumer thread calling them in a loop, and closes them from this thread
while a call is (most often) in flight, the GIL dropped. Every round must
end with the consumer's next call raising StateError, and nothing may
crash; under ASan or TSan (python/CMakeLists.txt runs this file alone in
those builds, their runtime preloaded) a use after free or a race fails it.

Usage: close_race.py [ROUNDS] (default 200). Imported by test_loader.py."""

import os
import random
import sys
import tempfile
import threading

import sluice


def make_dataset(path, n=16, seed=0):
    rng = random.Random(seed)
    w = sluice.Writer(str(path))
    for i in range(n):
        wd, ht = rng.randint(64, 96), rng.randint(64, 96)
        w.add_pixels(rng.randbytes(wd * ht * 3), wd, ht, 3, label=i % 3)
    w.commit()
    w.close()


def _race(calls, close, pause):
    """Runs calls() on a thread until it raises, closes when the thread is
    in its loop (after pause seconds); returns what ended the loop."""
    going = threading.Event()
    ended = []

    def consumer():
        try:
            while True:
                going.set()
                calls()
        except BaseException as e:  # noqa: B902 - reported to the caller
            ended.append(e)
        finally:
            going.set()

    t = threading.Thread(target=consumer)
    t.start()
    going.wait()
    if pause:
        threading.Event().wait(pause)
    close()
    t.join()
    return ended[0] if ended else None


def _check(what, round_, e):
    if not isinstance(e, sluice.StateError) or "closed" not in str(e):
        raise AssertionError("round %d, %s: the loop ended with %r, not a "
                             "closed-state error" % (round_, what, e))


def run(path, rounds=200, seed=1):
    rng = random.Random(seed)
    opts = {"dataset.path": path, "loader.batch_size": 4,
            "loader.workers": 1, "resolution.max": 64,
            "augment.dtype": "u8", "device.prefetch": 2}
    for r in range(rounds):
        pause = rng.choice([0, 0, 0.0002, 0.001])
        ld = sluice.Loader(opts)
        ld.set_epoch(0)

        def drive():
            if ld.next() is None:
                ld.set_epoch(rng.randrange(4))
            if rng.random() < 0.2:
                ld.stats()
                ld.state_dict()
        _check("loader", r, _race(drive, ld.close, pause))

        ds = sluice.Dataset(path)
        n = len(ds)

        def read():
            i = rng.randrange(n)
            ds._c.decode(i)
            ds.read(i)
            ds.info(i)
        _check("dataset", r, _race(read, ds.close, pause))
    return rounds


def main(argv):
    rounds = int(argv[1]) if len(argv) > 1 else 200
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "race.lmdb")
        make_dataset(path)
        run(path, rounds)
    print("close_race: %d rounds, every call after close() raised "
          "StateError" % rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
