"""sluice: feeds training loops from image datasets, zero copy.

    import sluice
    with sluice.Loader("train.ini", batch_size=256) as loader:
        for epoch in range(10):
            for batch in loader.epoch(epoch):
                x = torch.from_dlpack(batch.images)   # a view of the slot
                y = torch.from_dlpack(batch.labels)

A batch's arrays are views of one slot of the loader's ring. The slot is
not rewritten until the Batch and every tensor made from it are freed;
holding more than ``device.prefetch`` batches at once makes the next
``next`` raise :class:`StateError` naming that setting.
"""

import os

from . import _sluice
# sluice.augment after a plain ``import sluice``, as the README writes it
# (sluice.torch is not imported here: it imports torch).
from . import augment  # noqa: F401
from ._sluice import (  # noqa: F401
    Batch,
    ConfigError,
    CudaError,
    DecodeError,
    Error,
    FormatError,
    InvalidArgumentError,
    IOError,
    NoDeviceError,
    NotFoundError,
    OutOfMemoryError,
    SampleError,
    StateError,
    Tensor,
    ThreadError,
    TooBigError,
    UnsupportedError,
    Writer,
)

__all__ = [
    "Loader", "Dataset", "Writer", "Batch", "Tensor", "Error", "options",
    "option_names", "version", "pack", "index", "state_info", "__version__",
    "augment",
]

_STATE_MAGIC = "sluice.Loader/1"

#: libsluice's version string, as ``version()`` returns it.
__version__ = _sluice.version()


def version():
    """libsluice's version string (also ``sluice.__version__``)."""
    return _sluice.version()


def options():
    """Every config option: a list of (key, type, default, allowed, help).
    ``option_names()`` gives the short keyword names Loader takes."""
    return _sluice.options()


def option_names():
    """The keyword names ``Loader(**options)`` takes, as a dict of name ->
    full key: ``section_key`` for every option (``augment_layout``) and the
    key's last part alone where no other section has it (``batch_size``).
    """
    return dict(_short_names()[0])


# The keyword names of renamed keys' old names (loader/config.c's
# k_old_names): Loader passes the old key on, which the C side reads as
# the new one (dataset.entries, dataset.axis_order). Not listed by
# option_names().
_OLD_NAMES = {"dataset_layout": "dataset.layout",
              "dataset_array_layout": "dataset.array_layout",
              "array_layout": "dataset.array_layout"}


def _short_names():
    """Maps short option names to full keys: the key's last part when no
    other section has it ("batch_size"), and section_key always
    ("augment_layout")."""
    keys = [o[0] for o in _sluice.options()]
    last = {}
    for k in keys:
        last.setdefault(k.split(".", 1)[1], []).append(k)
    names = {}
    for k in keys:
        section, rest = k.split(".", 1)
        names[section + "_" + rest] = k
        if len(last[rest]) == 1:
            names[rest] = k
    return names, set(keys)


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _default_rank_world():
    """(rank, world) from torch.distributed when it is initialised, else
    from RANK / WORLD_SIZE, else None."""
    try:
        import sys
        dist = sys.modules.get("torch.distributed")
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except Exception:  # torch absent or half-initialised: fall through
        pass
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    return None


def _resolve_options(config, options):
    """The (key, text) pairs to apply, in order, and the INI path."""
    names, keys = _short_names()
    path = None
    pairs = []
    if isinstance(config, dict):
        items = list(config.items())
    elif config is None:
        items = []
    else:
        path = os.fspath(config)
        items = []
    items += list(options.items())
    for k, v in items:
        full = k if k in keys else names.get(k, _OLD_NAMES.get(k))
        if full is None:
            # Let the C side say it, with its nearest-key suggestion.
            full = k
        if full == "dataset.path" and isinstance(v, (list, tuple)):
            # Several datasets: a mix, each by its weight (dataset.weights).
            full = "dataset.mix"
            for i, p in enumerate(v):
                if "," in _text(p):
                    # Named by its place: a URL's credentials stay out of
                    # the message.
                    raise ValueError("path: the mix's dataset %d holds a "
                                     "comma, which separates the datasets of "
                                     "a mix" % i)
        pairs.append((full, _text(v)))
    given = {k for k, _ in pairs}
    # path= names the dataset whatever the INI file names: a list replaces
    # its dataset.path, a single path its dataset.mix.
    if "dataset.mix" in given and "dataset.path" not in given:
        pairs.insert(0, ("dataset.path", ""))
    if "dataset.path" in given and not given & {"dataset.mix",
                                                "dataset.weights"}:
        pairs[:0] = [("dataset.mix", ""), ("dataset.weights", "")]
    if "loader.rank" not in given and "loader.world_size" not in given:
        rw = _default_rank_world()
        if rw is not None:
            pairs.append(("loader.rank", str(rw[0])))
            pairs.append(("loader.world_size", str(rw[1])))
    if "device.gpu" not in given and "LOCAL_RANK" in os.environ:
        pairs.append(("device.gpu", os.environ["LOCAL_RANK"]))
    return path, pairs


def _cli():
    from .__main__ import _cli as find
    return find()


def pack(source, out, *args, progress=True):
    """Packs an image folder (or, with "--from", another dataset) into an
    LMDB or HDF5 file by running ``sluice pack SOURCE OUT ARGS...``.
    ``progress``: True draws a bar (tqdm when installed, else a line on
    stderr redrawn in place), False draws none, or a callable called with
    (done, total) images. Returns the command's summary (stdout); raises
    Error with the command's message."""
    import subprocess
    cmd = [_cli(), "pack", os.fspath(source), os.fspath(out)]
    cmd += [os.fspath(a) if isinstance(a, os.PathLike) else str(a)
            for a in args]
    if progress is not False and "--from" not in cmd:
        cmd += ["--progress", "lines"]
    show = _progress_sink(progress)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    # stdout is read by a thread so that neither pipe can fill and stall
    # the command while the other is read.
    import threading
    out_text = []
    reader = threading.Thread(target=lambda: out_text.append(p.stdout.read()))
    reader.start()
    messages = []
    try:
        for line in p.stderr:
            f = line.split()
            if len(f) == 4 and f[0] == "progress" and f[1].isdigit():
                show(int(f[1]), int(f[2]))
            else:
                messages.append(line)
    finally:
        show(None, None)
        rc = p.wait()
        reader.join()
    if rc != 0:
        raise Error("".join(messages).strip()
                    or "sluice pack failed (exit %d)" % rc)
    return "".join(out_text).strip()


def index(folder):
    """Makes the shards in ``folder`` one dataset: writes
    ``folder/sluice.index`` listing every committed shard (sluice LMDB or
    HDF5 files named *.lmdb, *.mdb, *.h5, *.hdf5, written by ``Writer`` or
    ``sluice pack`` in any number of processes) in name order, as ``sluice
    index`` does. Run it again after adding shards; unchanged shards are not
    read again. Shards must share their class names, target width and writer
    settings (FormatError names the one that differs). Returns a dict:
    shards, samples, shard_bytes, index_bytes, checksummed (shards read
    whole for their checksum). Open the set with ``path=folder``.

    ``folder`` may instead be the URL of WebDataset or TFRecord shards
    (``s3://``,
    ``http(s)://``: a .tar, a brace pattern, a list file at a URL): their
    sidecar index is built again in the default cache folder
    (docs/REMOTE.md)."""
    return _sluice.index(folder)


def _progress_sink(progress):
    """A function of (done, total), called with (None, None) at the end."""
    if callable(progress):
        return lambda done, total: done is not None and progress(done, total)
    if not progress:
        return lambda done, total: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    import sys
    state = {"bar": None}

    def show(done, total):
        bar = state["bar"]
        if done is None:
            if bar is not None and tqdm is not None:
                bar.close()
            elif bar is not None:
                sys.stderr.write("\n")
            return
        if tqdm is not None:
            if bar is None:
                bar = state["bar"] = tqdm(total=total, unit="img",
                                          desc="sluice pack")
            bar.update(done - bar.n)
        else:
            state["bar"] = True
            sys.stderr.write("\rsluice pack: %d/%d images" % (done, total))
            sys.stderr.flush()
    return show


class Loader:
    """A sluice loader: ``Loader(config=None, **options)``.

    ``config`` is an INI path, a dict of full keys
    (``{"loader.batch_size": 256}``) or None; ``options`` are short names
    (``batch_size=256``, ``workers=4``, ``prefetch=3``, ``augment_layout=
    "nhwc"``; ``sluice.option_names()`` lists them) or full keys through
    the dict. Options win over the file. Relative paths in the INI file
    are read from its folder; those given here from the working directory.
    ``loader.rank`` / ``loader.world_size`` default to torch.distributed's
    when it is initialised, else to ``RANK`` / ``WORLD_SIZE``.

    Memory: what the C loader allocates at open (``sluice schedule``
    prints it) and never grows; each Batch holds one slot of
    ``device.prefetch``. Threads: ``loader.workers`` workers and a mover,
    started at open, stopped when the loader and its last batch are gone.
    Thread safety: one thread at a time drives a loader (``next``,
    ``epoch``, ``state_dict``...); ``next`` releases the GIL while it
    waits. Batches and their tensors may be read and freed on any thread.
    """

    def __init__(self, config=None, **options):
        path, pairs = _resolve_options(config, options)
        self._c = _sluice._Loader(path, pairs)
        self._epoch = None
        self._handed = 0
        self._gen = 0

    # ---- life -----------------------------------------------------------
    def close(self):
        """Stops the loader. Its threads and memory go once every batch and
        tensor made from it are freed too; those stay valid until then.
        From another thread (a watchdog): waits for the call in flight;
        every later call raises StateError."""
        self._c.close()

    @property
    def closed(self):
        return self._c.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- epochs ---------------------------------------------------------
    def __len__(self):
        """Batches per epoch for this rank (the same on every rank). For
        an epoch restored on another world size (load_state_dict), the
        batches of its deal of what the saved run left: iterating the
        restored epoch gives exactly that many."""
        if self._epoch is not None:
            return self._c.epoch_batches()
        return self._c.batches_per_epoch()

    @property
    def sample_count(self):
        """Samples in the dataset (a mix: in all its datasets)."""
        return self._c.sample_count()

    @property
    def source_count(self):
        """Datasets mixed (``path=[...]``, dataset.mix); 1 for one."""
        return self._c.source_count()

    def source_of(self, index):
        """``(dataset, index there)`` of sample ``index`` (batch.indices):
        a mix's indices are its datasets' one after the other."""
        return self._c.source_of(int(index))

    @property
    def current_epoch(self):
        """The epoch in progress: the last one started (set_epoch, epoch,
        iteration or next) or restored (load_state_dict); None before any.
        """
        return self._epoch

    def resolution(self, epoch):
        """The epoch's square resolution under the schedule."""
        return self._c.resolution(_epoch_number(epoch))

    def set_epoch(self, epoch):
        """Starts an epoch (abandoning the one in progress). ``epoch`` is an
        integer >= 0; any order is fine."""
        epoch = _epoch_number(epoch)
        self._c.start_epoch(epoch)
        self._epoch = epoch
        self._handed = 0
        self._gen += 1

    def next(self):
        """The next Batch of the current epoch, or None at its end. As
        iterating the loader does, it starts epoch 0 when no epoch was
        started (set_epoch, epoch or load_state_dict); call
        ``set_epoch(e)`` for each epoch of a run."""
        if self._epoch is None:
            self.set_epoch(0)
        b = self._c.next()
        if b is not None:
            self._handed += 1
        return b

    def epoch(self, epoch):
        """Starts ``epoch`` and iterates over its batches. Breaking out
        early leaves nothing behind: the next epoch() starts afresh."""
        self.set_epoch(epoch)
        return self._iterate()

    def _iterate(self):
        # An iterator of an epoch since abandoned (set_epoch, epoch, a
        # restore) stops. The batch is dropped on resuming, before the next
        # next, so the iterator itself never holds a slot while it waits;
        # the caller's loop variable does (a for loop holds the previous
        # batch while asking for the next: device.prefetch >= 2).
        gen = self._gen
        while gen == self._gen:
            b = self._c.next()
            if b is None:
                return
            self._handed += 1
            yield b
            del b

    def __iter__(self):
        """Iterates over the current epoch (epoch 0 when none started, or
        the rest of a restored one)."""
        if self._epoch is None:
            self.set_epoch(0)
        return self._iterate()

    # ---- stats and resume ----------------------------------------------
    def stats(self):
        """The C loader's counters (sl_loader_stats) as a dict, plus
        dlpack_exports / dlpack_deleted (DLPack tensors made and freed) and
        batches_held."""
        return self._c.stats()

    def state_dict(self):
        """Where the loader is: the C state blob ``state``, which also
        checks the settings and data on load (torchdata's Stateful
        protocol), and beside it, to log or to see why a resume is
        refused, what the blob says (``sluice.state_info``): ``epoch``,
        ``batches`` (each rank read of it), ``samples_read`` and
        ``samples_left`` (real samples of the epoch, all ranks together),
        ``rank``, ``world_size``, ``batch_size`` (per rank),
        ``sample_count``, ``seed``, ``drop_last``, ``resumes`` (times the
        epoch was resumed on another world size), ``resumed_from_world``
        (0, or the world size of the run this epoch was last resumed
        from). Only
        ``format`` and ``state`` are read back."""
        blob = self._c.save_state()
        info = state_info(blob)
        state = {"format": _STATE_MAGIC, "state": blob}
        for k in ("epoch", "batches", "samples_read", "samples_left", "rank",
                  "world_size", "batch_size", "sample_count", "seed",
                  "drop_last", "resumes", "resumed_from_world"):
            state[k] = info[k]
        return state

    def load_state_dict(self, state):
        """Resumes at a saved point: the following batches are exactly those
        an uninterrupted run would have given. Continue by iterating the
        loader (``for b in loader``: the rest of the saved epoch,
        ``current_epoch``), then ``epoch(e)`` for the later ones;
        ``epoch(current_epoch)`` would start the saved epoch again from its
        first batch. Raises StateError when the settings or data differ.

        Elastic: a state saved by any rank restores on any rank and any
        ``world_size``. On another world size the samples of the saved
        epoch that no rank had read yet (every rank having read the same
        number of batches, as data-parallel training does) are dealt to
        the new ranks, each read exactly once across them, the same way
        every time; ``batch_size`` stays per rank, and ``len(loader)`` is
        that epoch's batches. Later epochs are dealt on the new world
        size. See docs/PYTHON.md, "Elastic training"."""
        if not isinstance(state, dict) or state.get("format") != _STATE_MAGIC:
            raise InvalidArgumentError(
                "not a sluice.Loader state_dict (expected format %r)"
                % _STATE_MAGIC)
        self._c.restore_state(bytes(state["state"]))
        self._epoch = self.stats()["epoch"]
        self._gen += 1


def state_info(state):
    """What a state says, as a dict (sl_loader_state_info): ``state`` is a
    Loader.state_dict() or its ``state`` bytes. Raises InvalidArgumentError
    for bytes that are not a readable loader state."""
    if isinstance(state, dict):
        state = state.get("state")
    try:
        blob = bytes(state)
    except TypeError:
        raise InvalidArgumentError(
            "not a sluice.Loader state: %r" % type(state).__name__) from None
    return _sluice._state_info(blob)


def _epoch_number(epoch):
    """epoch as an int >= 0, or InvalidArgumentError saying what it got."""
    import operator
    try:
        if isinstance(epoch, bool):
            raise TypeError
        e = operator.index(epoch)
    except TypeError:
        raise InvalidArgumentError(
            "epoch must be an integer >= 0, not %r" % (epoch,)) from None
    if e < 0 or e >= 1 << 64:
        raise InvalidArgumentError(
            "epoch must be an integer in 0..2**64-1, not %d" % e)
    return e


class Dataset:
    """A dataset file opened for random access: ``len(ds)``, ``ds[i]`` ->
    (pixels, label, targets) with pixels a NumPy u8 HWC array of the
    decoded image (owned, made through DLPack), ``class_names``.

    Memory: the index, 24 bytes a sample, and the targets. Thread safety:
    read-only; any thread may read at once."""

    def __init__(self, path):
        self._c = _sluice._Dataset(path)

    def __len__(self):
        return len(self._c)

    def __getitem__(self, i):
        import numpy as np
        info = self._c.info(i)
        pixels = np.from_dlpack(self._c.decode(i))
        return pixels, info["label"], info["targets"]

    def info(self, i):
        return self._c.info(i)

    def boxes(self, i):
        """Sample i's boxes: a list of (x0, y0, x1, y1, label, flags) in the
        stored image's pixels (flags: 1 crowd, 2 difficult); [] for a sample
        or a file without boxes."""
        return self._c.boxes(i)

    def read(self, i):
        """Sample i's stored bytes (the JPEG, PNG or raw pixels)."""
        return self._c.read(i)

    def name(self, i):
        """Sample i's name: the path, relative to the packed folder, of the
        image it was made from; '' when the file records none."""
        return self._c.name(i)

    @property
    def class_names(self):
        return self._c.class_names

    @property
    def target_width(self):
        return self._c.target_width

    @property
    def format(self):
        return self._c.format

    def close(self):
        """Frees the dataset once the reads in flight on other threads end;
        every later call raises StateError."""
        self._c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
