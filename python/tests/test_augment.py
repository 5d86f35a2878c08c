"""sluice.augment's ops against torchvision's functional ops on uint8
tensors (the reference: same parameters, same geometry, same rounding),
on a real photo and on edge cases; the policies' draws against
torchvision's tables; ColorJitter's and RandomErasing's draws against
their get_params, and the loader applying exactly what draw_recipe shows;
the recipe in the loader: deterministic for any worker count, resumable,
absent in eval mode."""

import collections
import math
import os

import numpy as np
import pytest

import sluice
import sluice.augment as A

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")
import torchvision.transforms.functional as F  # noqa: E402
from torchvision.transforms import InterpolationMode  # noqa: E402
from torchvision.transforms import autoaugment as tv_auto  # noqa: E402
try:  # torchvision < 0.17; private (and kept) since 0.15
    from torchvision.transforms import functional_tensor as F_t  # noqa: E402
except ImportError:
    from torchvision.transforms import _functional_tensor as F_t  # noqa: E402

PHOTO = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"


def _photo():
    """A real photo (matplotlib's sample data, Debian python3-matplotlib),
    decoded by PIL and shrunk so that torch's ops stay quick."""
    if not os.path.exists(PHOTO):
        pytest.skip("no real photo: apt-get install python3-matplotlib")
    from PIL import Image
    im = Image.open(PHOTO).convert("RGB")
    im = im.resize((im.width // 4, im.height // 4), Image.BILINEAR)
    return np.asarray(im, dtype=np.uint8)


def images():
    photo = _photo()
    rng = np.random.default_rng(3)
    yield "photo", photo
    yield "photo_odd_crop", np.ascontiguousarray(photo[13:50, 7:60])
    yield "noise", rng.integers(0, 256, (17, 23, 3), dtype=np.uint8)
    yield "one_pixel", rng.integers(0, 256, (1, 1, 3), dtype=np.uint8)
    yield "one_row", rng.integers(0, 256, (1, 9, 3), dtype=np.uint8)
    yield "flat", np.full((8, 6, 3), 77, np.uint8)
    gray = np.asarray(photo.mean(axis=2), np.uint8)[:40, :30, None]
    yield "gray", np.ascontiguousarray(gray)


IMAGES = None


def all_images():
    global IMAGES
    if IMAGES is None:
        IMAGES = list(images())
    return IMAGES


def to_tensor(img):
    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))


def to_hwc(t):
    return t.numpy().transpose(1, 2, 0)


COLOR_CASES = [
    ("adjust_brightness", dict(brightness_factor=0.0), F.adjust_brightness, (0.0,)),
    ("adjust_brightness", dict(brightness_factor=0.37), F.adjust_brightness, (0.37,)),
    ("adjust_brightness", dict(brightness_factor=1.99), F.adjust_brightness, (1.99,)),
    ("adjust_contrast", dict(contrast_factor=0.01), F.adjust_contrast, (0.01,)),
    ("adjust_contrast", dict(contrast_factor=1.8), F.adjust_contrast, (1.8,)),
    ("adjust_saturation", dict(saturation_factor=0.0), F.adjust_saturation, (0.0,)),
    ("adjust_saturation", dict(saturation_factor=1.7), F.adjust_saturation, (1.7,)),
    ("adjust_hue", dict(hue_factor=-0.5), F.adjust_hue, (-0.5,)),
    ("adjust_hue", dict(hue_factor=0.13), F.adjust_hue, (0.13,)),
    ("adjust_hue", dict(hue_factor=0.0), F.adjust_hue, (0.0,)),
    ("adjust_sharpness", dict(sharpness_factor=0.01), F.adjust_sharpness, (0.01,)),
    ("adjust_sharpness", dict(sharpness_factor=1.99), F.adjust_sharpness, (1.99,)),
    ("posterize", dict(bits=0), F.posterize, (0,)),
    ("posterize", dict(bits=3), F.posterize, (3,)),
    ("posterize", dict(bits=8), F.posterize, (8,)),
    ("solarize", dict(threshold=0.0), F.solarize, (0.0,)),
    ("solarize", dict(threshold=127.5), F.solarize, (127.5,)),
    ("solarize", dict(threshold=255.0), F.solarize, (255.0,)),
    ("autocontrast", {}, F.autocontrast, ()),
    ("equalize", {}, F.equalize, ()),
    ("invert", {}, F.invert, ()),
    ("rgb_to_grayscale", {}, lambda t: F.rgb_to_grayscale(t, 3), ()),
    ("hflip", {}, F.hflip, ()),
    ("gaussian_blur", dict(kernel_size=3, sigma=0.7),
     lambda t: F.gaussian_blur(t, [3, 3], [0.7, 0.7]), ()),
    ("gaussian_blur", dict(kernel_size=(5, 1), sigma=(2.0, 0.5)),
     lambda t: F.gaussian_blur(t, [5, 1], [2.0, 0.5]), ()),
    ("erase", dict(i=2, j=3, h=4, w=5, v=(10, 20, 30)), None, ()),
]


def _reference(name, fn, args, t):
    if name == "erase":
        out = t.clone()
        v = torch.tensor([10, 20, 30], dtype=torch.uint8)[: t.shape[0], None, None]
        return F.erase(out, 2, 3, 4, 5, v)
    if name == "rgb_to_grayscale" and t.shape[0] == 1:
        return t.clone()
    return fn(t, *args)


@pytest.mark.parametrize("name,params,fn,args", COLOR_CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(COLOR_CASES)])
def test_pointwise_and_filter_ops_match_torchvision(name, params, fn, args):
    for label, img in all_images():
        if name == "gaussian_blur" and min(img.shape[:2]) <= max(
                params["kernel_size"] if isinstance(params["kernel_size"], tuple)
                else (params["kernel_size"],)) // 2:
            continue  # torchvision refuses reflect padding this wide
        t = to_tensor(img)
        ref = to_hwc(_reference(name, fn, args, t)).astype(int)
        got = A.apply(name, img, **params).astype(int)
        assert got.shape == img.shape
        diff = np.abs(got - ref)
        assert diff.max() <= 1, "%s on %s: max diff %d at %s" % (
            name, label, diff.max(), np.unravel_index(diff.argmax(), diff.shape))


def _sampling_grid(matrix, w, h):
    """torchvision's affine grid in pixel coordinates of the input."""
    theta = torch.tensor(matrix, dtype=torch.float32).reshape(1, 2, 3)
    g = F_t._gen_affine_grid(theta, w=w, h=h, ow=w, oh=h)[0].double().numpy()
    x = ((g[..., 0] + 1) * w - 1) / 2
    y = ((g[..., 1] + 1) * h - 1) / 2
    return x, y


def _near_boundary(x, y, eps=1e-3):
    fx = np.abs((x - np.floor(x)) - 0.5) < eps
    fy = np.abs((y - np.floor(y)) - 0.5) < eps
    return fx | fy


GEOMETRY_CASES = [
    ("rotate", dict(angle=0.0)),
    ("rotate", dict(angle=90.0)),
    ("rotate", dict(angle=180.0)),
    ("rotate", dict(angle=-45.0)),
    ("rotate", dict(angle=33.3, fill=(255, 0, 128))),
    ("rotate", dict(angle=20.0, center=(3, 5))),
    ("affine", dict(angle=12.0, translate=(3, -2), scale=1.2, shear=(8.0, -5.0))),
    ("affine", dict(angle=-70.0, translate=(0, 0), scale=0.7, shear=0.0,
                    fill=(9, 99, 199))),
    ("shear_x", dict(shear=math.degrees(math.atan(0.3)))),
    ("shear_y", dict(shear=-math.degrees(math.atan(0.99)))),
    ("translate_x", dict(translate=-7)),
    ("translate_y", dict(translate=4)),
]


def _tv_geometry(name, params, t, interp):
    fill = params.get("fill")
    fill = list(map(float, fill))[: t.shape[0]] if fill is not None else None
    if name == "rotate":
        c = params.get("center")
        return F.rotate(t, params["angle"], interpolation=interp, fill=fill,
                        center=list(c) if c else None)
    if name == "affine":
        shear = params["shear"]
        shear = list(shear) if isinstance(shear, tuple) else shear
        return F.affine(t, angle=params["angle"], translate=list(params["translate"]),
                        scale=params["scale"], shear=shear, interpolation=interp,
                        fill=fill)
    if name == "shear_x":
        return F.affine(t, 0.0, [0, 0], 1.0, [params["shear"], 0.0],
                        interpolation=interp, fill=fill, center=[0, 0])
    if name == "shear_y":
        return F.affine(t, 0.0, [0, 0], 1.0, [0.0, params["shear"]],
                        interpolation=interp, fill=fill, center=[0, 0])
    if name == "translate_x":
        return F.affine(t, 0.0, [params["translate"], 0], 1.0, [0.0, 0.0],
                        interpolation=interp, fill=fill)
    return F.affine(t, 0.0, [0, params["translate"]], 1.0, [0.0, 0.0],
                    interpolation=interp, fill=fill)


def _tv_matrix(name, params, w, h):
    def centered(c):
        return [c[0] - w * 0.5, c[1] - h * 0.5]
    if name == "rotate":
        c = params.get("center")
        return F._get_inverse_affine_matrix(centered(c) if c else [0.0, 0.0],
                                            -params["angle"], [0.0, 0.0], 1.0, [0.0, 0.0])
    if name == "affine":
        s = params["shear"]
        s = list(s) if isinstance(s, tuple) else [s, 0.0]
        return F._get_inverse_affine_matrix([0.0, 0.0], params["angle"],
                                            list(params["translate"]), params["scale"], s)
    if name in ("shear_x", "shear_y"):
        s = [params["shear"], 0.0] if name == "shear_x" else [0.0, params["shear"]]
        return F._get_inverse_affine_matrix(centered((0, 0)), 0.0, [0.0, 0.0], 1.0, s)
    t = [params["translate"], 0] if name == "translate_x" else [0, params["translate"]]
    return F._get_inverse_affine_matrix([0.0, 0.0], 0.0, t, 1.0, [0.0, 0.0])


def _psnr(a, b):
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return float("inf") if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


@pytest.mark.parametrize("name,params", GEOMETRY_CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(GEOMETRY_CASES)])
def test_geometric_ops_match_torchvision(name, params):
    for label, img in all_images():
        t = to_tensor(img)
        h, w = img.shape[:2]
        # nearest: identical but where the sampling point is within 1e-3
        # of a pixel boundary (float32 grid against sluice's doubles)
        ref = to_hwc(_tv_geometry(name, params, t, InterpolationMode.NEAREST))
        got = A.apply(name, img, interpolation="nearest", **params)
        x, y = _sampling_grid(_tv_matrix(name, params, w, h), w, h)
        ok = ~_near_boundary(x, y)
        bad = (got != ref).any(axis=2) & ok
        assert not bad.any(), "%s %s nearest on %s: %d pixels differ, first %s" % (
            name, params, label, bad.sum(), np.argwhere(bad)[0])
        # bilinear: PSNR >= 40 dB
        ref = to_hwc(_tv_geometry(name, params, t, InterpolationMode.BILINEAR))
        got = A.apply(name, img, interpolation="bilinear", **params)
        assert _psnr(got, ref) >= 40, "%s bilinear on %s: PSNR %.1f dB" % (
            name, label, _psnr(got, ref))


def test_every_op_of_the_c_table_is_callable():
    # OPS and BOX_OPS come from the C library's table at import: every op
    # there runs through apply with each of its parameters, and the box
    # ops through apply_boxes.
    names = [row[0] for row in sluice._sluice._augment_ops()]
    assert list(A.OPS) == names and len(names) == 20
    assert A.BOX_OPS == ("rotate", "affine", "shear_x", "shear_y",
                         "translate_x", "translate_y", "hflip")
    assert A.OPS["adjust_hue"] == {"hue_factor": "factor"}
    assert A.OPS["erase"]["v"] == "value"
    given = {"angle": 10, "translate": 3, "scale": 1.0, "shear": 5,
             "center": [2, 2], "interpolation": "bilinear", "fill": 7,
             "brightness_factor": 1.5, "contrast_factor": 0.5,
             "saturation_factor": 2.0, "hue_factor": 0.1,
             "sharpness_factor": 2.0, "bits": 3, "threshold": 100,
             "kernel_size": 3, "sigma": 1.0, "i": 1, "j": 1, "h": 2, "w": 2,
             "v": 255}
    img = np.arange(6 * 5 * 3, dtype=np.uint8).reshape(6, 5, 3)
    for name, params in A.OPS.items():
        out = A.apply(name, img, **{k: given[k] for k in params})
        assert out.shape == img.shape, name
        if name in A.BOX_OPS:
            boxes = A.apply_boxes(name, [[1, 1, 3, 4]], 6, 5,
                                  **{k: given[k] for k in params})
            assert boxes.shape == (1, 4), name


def test_bad_parameters_are_refused_with_their_name():
    img = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(sluice.InvalidArgumentError, match="hue"):
        A.apply("adjust_hue", img, hue_factor=0.7)
    with pytest.raises(sluice.InvalidArgumentError, match="kernel_size"):
        A.apply("gaussian_blur", img, kernel_size=4, sigma=1.0)
    with pytest.raises(sluice.InvalidArgumentError, match="bits"):
        A.apply("posterize", img, bits=9)
    with pytest.raises(sluice.InvalidArgumentError, match="unknown op"):
        A.apply("sepia", img)
    # not a finite number: nothing to sample, no byte to truncate to
    for op, kw in [("rotate", dict(angle=float("nan"))),
                   ("translate_x", dict(translate=float("inf"))),
                   ("affine", dict(angle=0.0, translate=(0, 0), scale=float("inf"),
                                   shear=0.0)),
                   ("rotate", dict(angle=10.0, fill=(0, float("nan"), 0))),
                   ("adjust_brightness", dict(brightness_factor=float("inf")))]:
        with pytest.raises(sluice.InvalidArgumentError, match="not a finite number"):
            A.apply(op, img, **kw)
    with pytest.raises(TypeError, match="angle"):
        A.apply("invert", img, angle=3)
    with pytest.raises(TypeError, match="uint8"):
        A.apply("invert", img.astype(np.float32))


# ---- Policies: the draws against torchvision's own tables -------------------

def _tv_table(space, name):
    mags, signed = space[name]
    values = [0.0] if mags.ndim == 0 else [float(m) for m in mags]
    return values, signed


def _check_draws(draws, space, op_probs, magnitude_ok):
    counts = collections.Counter(op for op, _ in draws)
    n = len(draws)
    for op, p in op_probs.items():
        sd = math.sqrt(n * p * (1 - p))
        assert abs(counts[op] - n * p) <= 5 * sd + 1, (op, counts[op], n * p)
    assert set(counts) <= set(op_probs), set(counts) - set(op_probs)
    signs = collections.Counter()
    for op, m in draws:
        values, signed = _tv_table(space, op)
        assert magnitude_ok(op, abs(m) if signed else m, values), (op, m)
        if signed and m != 0:
            signs[m > 0] += 1
        if not signed:
            assert m >= 0 or op == "Identity", (op, m)
    total = signs[True] + signs[False]
    assert abs(signs[True] - total / 2) <= 5 * math.sqrt(total / 4), signs


def _in_table(op, m, values):
    return any(abs(m - v) <= 1e-5 * max(1.0, abs(v)) for v in values)


def _draws(n, **options):
    out = []
    for i in range(n):
        out += A.draw(None, epoch=1, index=i, width=224, height=160, **options)
    return out


def test_trivial_augment_draws_follow_torchvision():
    space = tv_auto.TrivialAugmentWide()._augmentation_space(31)
    draws = _draws(6000, augment_auto="trivial")
    assert len(draws) == 6000  # one op per image
    _check_draws(draws, space, {k: 1 / len(space) for k in space}, _in_table)
    # the bins of one op are uniform: each of 31 values of Rotate appears
    rot = collections.Counter(round(abs(m), 4) for op, m in draws if op == "Rotate")
    assert len(rot) == 31


def test_randaugment_draws_follow_torchvision():
    space = tv_auto.RandAugment()._augmentation_space(31, (160, 224))
    draws = _draws(3000, augment_auto="randaugment", auto_ops=2, auto_magnitude=9)
    assert len(draws) == 6000
    want = {k: _tv_table(space, k)[0][9 if space[k][0].ndim else 0] for k in space}
    _check_draws(draws, space, {k: 1 / len(space) for k in space},
                 lambda op, m, values: abs(m - want[op]) <= 1e-5 * max(1, abs(want[op])))


def test_randaugment_magnitude_std_spreads_the_bin_as_timm():
    draws = _draws(3000, augment_auto="randaugment", auto_ops=1, auto_magnitude=9,
                   auto_bins=11, auto_magnitude_std=0.5)
    rot = [abs(m) / 30.0 * 10 for op, m in draws if op == "Rotate"]
    assert len(rot) > 100
    assert abs(np.mean(rot) - 9) < 0.15 and 0.35 < np.std(rot) < 0.65
    assert max(rot) <= 10 + 1e-6


def test_autoaugment_imagenet_draws_follow_torchvision():
    aa = tv_auto.AutoAugment(tv_auto.AutoAugmentPolicy.IMAGENET)
    space = aa._augmentation_space(10, (160, 224))
    expected = collections.Counter()
    for sub in aa.policies:
        for op, p, _ in sub:
            expected[op] += p / len(aa.policies)  # expected applications per image
    n = 8000
    draws = _draws(n, augment_auto="autoaugment")
    counts = collections.Counter(op for op, _ in draws)
    for op, e in expected.items():
        assert abs(counts[op] - n * e) <= 5 * math.sqrt(n * e) + 1, (op, counts[op], n * e)
    allowed = collections.defaultdict(set)
    for sub in aa.policies:
        for op, _, b in sub:
            values, _ = _tv_table(space, op)
            allowed[op].add(values[b] if b is not None else 0.0)
    for op, m in draws:
        signed = space[op][1]
        assert _in_table(op, abs(m) if signed else m, allowed[op]), (op, m)


def test_policy_ops_match_torchvision_apply_op():
    """Each drawn step applied by sluice equals torchvision's _apply_op."""
    img = _photo()[:64, :80].copy()
    t = to_tensor(img)
    for i in range(60):
        for op, m in A.draw(None, epoch=0, index=i, width=80, height=64,
                            augment_auto="trivial"):
            ref = to_hwc(tv_auto._apply_op(t, op, m, InterpolationMode.NEAREST, None))
            got = _apply_policy_op(img, op, m)
            diff = np.abs(got.astype(int) - ref.astype(int))
            if op in ("ShearX", "ShearY", "Rotate"):
                assert (diff > 1).any(axis=2).mean() < 0.01, (op, m)
            else:
                assert diff.max() <= 1, (op, m, diff.max())


def test_policy_fill_as_torchvision(opts):
    """augment.auto_fill is the policies' fill= (timm fills with the mean):
    each geometric step with a fill equals _apply_op with that fill, and
    the loader's samples carry the fill where the image moved away."""
    img = _photo()[:64, :80].copy()
    t = to_tensor(img)
    fill = [124.0, 116.0, 104.0]
    for op, m in (("Rotate", 25.0), ("ShearX", 0.3), ("TranslateY", -20.0)):
        ref = to_hwc(tv_auto._apply_op(t, op, m, InterpolationMode.NEAREST, fill))
        got = _apply_policy_op(img, op, m, fill=tuple(fill))
        diff = np.abs(got.astype(int) - ref.astype(int))
        assert (diff > 1).any(axis=2).mean() < 0.01, (op, m)
    base = {"augment.auto": "randaugment", "augment.auto_ops": 3,
            "augment.auto_magnitude": 30, "augment.flip": 0.0,
            "loader.order": "sequential"}
    a = _epoch_bytes(opts(**base), limit=2)
    b = _epoch_bytes(opts(**base, **{"augment.auto_fill": "124, 116, 104"}),
                     limit=2)
    assert a != b
    x = np.frombuffer(b"".join(b), np.uint8).reshape(-1, 3, 32, 32)
    filled = (x == np.array([124, 116, 104], np.uint8)[None, :, None, None]).all(axis=1)
    assert filled.sum() > 0


def _apply_policy_op(img, op, m, fill=None):
    if op == "ShearX":
        return A.apply("shear_x", img, shear=math.degrees(math.atan(m)), fill=fill)
    if op == "ShearY":
        return A.apply("shear_y", img, shear=math.degrees(math.atan(m)), fill=fill)
    if op == "TranslateX":
        return A.apply("translate_x", img, translate=int(m), fill=fill)
    if op == "TranslateY":
        return A.apply("translate_y", img, translate=int(m), fill=fill)
    if op == "Rotate":
        return A.apply("rotate", img, angle=m, fill=fill)
    simple = {"Brightness": "adjust_brightness", "Color": "adjust_saturation",
              "Contrast": "adjust_contrast", "Sharpness": "adjust_sharpness"}
    if op in simple:
        key = {"adjust_saturation": "saturation_factor"}.get(
            simple[op], simple[op].split("_")[1] + "_factor")
        return A.apply(simple[op], img, **{key: 1.0 + m})
    if op == "Posterize":
        return A.apply("posterize", img, bits=int(m))
    if op == "Solarize":
        return A.apply("solarize", img, threshold=m)
    if op == "Identity":
        return img
    return A.apply(op.lower(), img)


# ---- The recipe in the loader -----------------------------------------------

RECIPE = {
    "augment.auto": "trivial",
    "augment.color_jitter": "0.4, 0.4, 0.4, 0.1",
    "augment.grayscale": 0.2,
    "augment.blur": 0.5,
    "augment.blur_kernel": 5,
    "augment.erasing": 0.5,
    "augment.erasing_value": "random",
}


def _epoch_bytes(options, epoch=0, limit=None):
    out = []
    with sluice.Loader(options) as ld:
        for k, b in enumerate(ld.epoch(epoch)):
            if limit is not None and k >= limit:
                break
            out.append(bytes(memoryview(b.images)))
            del b
    return out


def test_recipe_is_deterministic_for_any_worker_count(opts):
    runs = [_epoch_bytes(opts(**RECIPE, **{"loader.workers": w,
                                           "augment.dtype": "fp16"}))
            for w in (1, 2, 4)]
    assert runs[0] == runs[1] == runs[2]
    plain = _epoch_bytes(opts(**{"loader.workers": 2, "augment.dtype": "fp16"}))
    assert plain != runs[0]  # the recipe changes the pixels


def test_recipe_resumes_exactly_mid_epoch(opts):
    o = opts(**RECIPE)
    full = _epoch_bytes(o, epoch=2)
    with sluice.Loader(o) as ld:
        it = ld.epoch(2)
        for _ in range(3):
            next(it)  # consumed and dropped
        state = ld.state_dict()
    with sluice.Loader(o) as ld:
        ld.load_state_dict(state)
        rest = [bytes(memoryview(b.images)) for b in ld]
    assert rest == full[3:]


def test_eval_mode_runs_none_of_the_recipe(opts):
    ev = {"loader.mode": "eval", "resolution.eval": 32}
    assert _epoch_bytes(opts(**ev, **RECIPE)) == _epoch_bytes(opts(**ev))


def test_recipe_draws_are_those_of_draw(opts):
    """The loader's policy draws are sluice.augment.draw's: with only
    Identity/op choices visible through the pixels, a sample whose draw is
    Identity (and no other op on) comes out as without the policy."""
    o = opts(**{"augment.auto": "trivial", "loader.order": "sequential",
                "augment.flip": 0.0, "loader.workers": 1})
    plain = opts(**{"loader.order": "sequential", "augment.flip": 0.0,
                    "loader.workers": 1})
    with sluice.Loader(o) as a, sluice.Loader(plain) as b:
        ba, bb = next(iter(a.epoch(0))), next(iter(b.epoch(0)))
        xa = np.asarray(memoryview(ba.images)).reshape(8, 3, 32, 32)
        xb = np.asarray(memoryview(bb.images)).reshape(8, 3, 32, 32)
        idx = np.asarray(memoryview(ba.indices))
        for j in range(8):
            steps = A.draw(None, epoch=0, index=int(idx[j]), width=32, height=32,
                           **{"loader.seed": 7, "augment.auto": "trivial"})
            same = (xa[j] == xb[j]).all()
            assert same == (steps[0][0] == "Identity"), (j, steps)
        del ba, bb


def test_erasing_box_in_normalized_units(opts):
    """Erasing with value 0 on fp32 batches writes 0.0 (the mean after
    Normalize) and, on u8 batches, the mean's byte."""
    o = {"augment.erasing": 1.0, "augment.erasing_scale": "0.3, 0.33",
         "augment.erasing_ratio": "1, 1", "augment.flip": 0.0}
    f = _epoch_bytes(opts(**o, **{"augment.dtype": "fp32"}), limit=1)[0]
    x = np.frombuffer(f, np.float32).reshape(8, 3, 32, 32)
    zeros = (x == 0).all(axis=1).sum(axis=(1, 2))
    assert (zeros >= 0.29 * 32 * 32 - 40).all(), zeros
    u = _epoch_bytes(opts(**o), limit=1)[0]
    x = np.frombuffer(u, np.uint8).reshape(8, 3, 32, 32)
    mean = np.round(np.array([0.485, 0.456, 0.406]) * 255).astype(np.uint8)
    hit = (x == mean[None, :, None, None]).all(axis=1).sum(axis=(1, 2))
    assert (hit >= 0.29 * 32 * 32 - 40).all(), hit


# ---- ColorJitter and RandomErasing: the draws against torchvision's ---------

JITTER_NAMES = ("brightness", "contrast", "saturation", "hue")


def _recipe_draws(n, epoch=3, width=224, height=224, **options):
    return [A.draw_recipe(None, epoch=epoch, index=i, width=width,
                          height=height, **options) for i in range(n)]


def _close_means(a, b, k=5.0):
    """|mean(a) - mean(b)| within k standard errors of the difference."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    se = math.sqrt(a.var() / len(a) + b.var() / len(b))
    return abs(a.mean() - b.mean()) <= k * se + 1e-12, (a.mean(), b.mean(), se)


def test_color_jitter_draws_follow_torchvision_get_params():
    """ColorJitter(0.4, 0.4, 0.4, 0.1).get_params: every one of the 24
    orders (fn_idx) about equally often, each factor in its range with
    torchvision's mean and spread; color_jitter_p is RandomApply's p."""
    n = 24000
    jitter = (0.4, 0.4, 0.4, 0.1)
    draws = _recipe_draws(n, **{"augment.color_jitter": "0.4, 0.4, 0.4, 0.1"})
    assert all(d["jitter"] is not None for d in draws)  # color_jitter_p = 1
    orders = collections.Counter(d["jitter"]["order"] for d in draws)
    assert len(orders) == 24 and all(sorted(o) == sorted(JITTER_NAMES)
                                     for o in orders)
    sd = math.sqrt(n * (1 / 24) * (23 / 24))
    for o, c in orders.items():
        assert abs(c - n / 24) <= 5 * sd, (o, c, n / 24)
    # torchvision's own draws, seeded
    torch.manual_seed(0)
    ranges = [(1 - b, 1 + b) for b in jitter[:3]] + [(-jitter[3], jitter[3])]
    tv_draws = [tv.transforms.ColorJitter.get_params(*ranges) for _ in range(n)]
    tv_orders = collections.Counter(tuple(JITTER_NAMES[k] for k in d[0].tolist())
                                    for d in tv_draws)
    assert len(tv_orders) == 24
    for k, name in enumerate(JITTER_NAMES):
        got = [d["jitter"]["factors"][name] for d in draws]
        want = [d[1 + k] for d in tv_draws]
        lo, hi = ranges[k]
        assert lo <= min(got) and max(got) <= hi, (name, min(got), max(got))
        ok, info = _close_means(got, want)
        assert ok, (name, info)
        ok, info = _close_means(np.square(np.subtract(got, np.mean(want))),
                                np.square(np.subtract(want, np.mean(want))))
        assert ok, (name, "spread", info)
        # uniform: each quarter of the range holds a quarter of the draws
        q = np.histogram(got, bins=4, range=(lo, hi))[0]
        assert (np.abs(q - n / 4) <= 5 * math.sqrt(n * 3 / 16)).all(), (name, q)


def test_color_jitter_ranges_clamp_and_skip_as_torchvision():
    """brightness 1.5 draws from [max(0, 1 - 1.5), 2.5] = [0, 2.5]; a 0
    turns its factor off (torchvision: None, not applied; sluice: 1, or 0
    for hue, and skipped); color_jitter_p = 0.8 applies it 80% of the time."""
    n = 6000
    draws = _recipe_draws(n, **{"augment.color_jitter": "1.5, 0, 0, 0.5",
                                "augment.color_jitter_p": 0.8})
    on = [d["jitter"] for d in draws if d["jitter"] is not None]
    assert abs(len(on) - 0.8 * n) <= 5 * math.sqrt(n * 0.8 * 0.2), len(on)
    b = [j["factors"]["brightness"] for j in on]
    h = [j["factors"]["hue"] for j in on]
    assert 0 <= min(b) < 0.05 and 2.45 < max(b) <= 2.5
    assert -0.5 <= min(h) < -0.49 and 0.49 < max(h) <= 0.5
    torch.manual_seed(1)
    tv_b = [tv.transforms.ColorJitter.get_params([0, 2.5], None, None, None)[1]
            for _ in range(n)]
    ok, info = _close_means(b, tv_b)
    assert ok, info
    assert all(j["factors"]["contrast"] == 1 and j["factors"]["saturation"] == 1
               for j in on)


def _batches(options, epoch=0):
    out = []
    with sluice.Loader(options) as ld:
        for b in ld.epoch(epoch):
            x = np.asarray(memoryview(b.images)).copy()
            idx = np.asarray(memoryview(b.indices)).copy()
            out.append((x, idx))
            del b
    return out


JITTER_OPS = {"brightness": ("adjust_brightness", F.adjust_brightness),
              "contrast": ("adjust_contrast", F.adjust_contrast),
              "saturation": ("adjust_saturation", F.adjust_saturation),
              "hue": ("adjust_hue", F.adjust_hue)}


def test_color_jitter_in_the_loader_is_torchvision_in_the_drawn_order(opts):
    """Each sample of a loader with ColorJitter on is its plain crop with
    sluice's single ops applied in the drawn order with the drawn factors,
    exactly; each of those steps is torchvision's F.adjust_* on the step
    before within a level, as the single ops are. A sample the draw leaves alone
    (color_jitter_p) is the plain crop."""
    jit = {"augment.color_jitter": "0.4, 0.4, 0.4, 0.1",
           "augment.color_jitter_p": 0.9}
    base = {"loader.order": "sequential", "augment.flip": 0.0,
            "loader.workers": 1}
    got = _batches(opts(**base, **jit))
    plain = _batches(opts(**base))
    seen, skipped = 0, 0
    for (xa, ia), (xb, ib) in zip(got, plain):
        assert (ia == ib).all()
        xa = xa.reshape(-1, 3, 32, 32)
        xb = xb.reshape(-1, 3, 32, 32)
        for k, index in enumerate(ia):
            d = A.draw_recipe(None, epoch=0, index=int(index), width=32,
                              height=32, **{"loader.seed": 7}, **jit)
            if d["jitter"] is None:
                assert (xa[k] == xb[k]).all(), index
                skipped += 1
                continue
            # Step by step: torchvision's op on sluice's previous step is
            # within a level of sluice's step (as the single ops are; a
            # level's difference carried through the later ops of a
            # torchvision-only chain can grow, and how far depends on
            # torchvision's version).
            img = xb[k].transpose(1, 2, 0).copy()
            for name in d["jitter"]["order"]:
                f = d["jitter"]["factors"][name]
                op, fn = JITTER_OPS[name]
                t = fn(torch.from_numpy(img.transpose(2, 0, 1).copy()), f)
                img = A.apply(op, img, **{name + "_factor": f})
                diff = np.abs(t.numpy().astype(int) -
                              img.transpose(2, 0, 1).astype(int))
                assert diff.max() <= 1, (index, name, d["jitter"], diff.max())
            assert (img.transpose(2, 0, 1) == xa[k]).all(), index
            seen += 1
    assert seen > 80 and skipped > 0, (seen, skipped)


def _tv_erase_boxes(n, height, width, scale, ratio, seed=0):
    """RandomErasing.get_params n times: (h, w) of each box, or None where
    its ten tries failed (get_params then returns the whole image)."""
    torch.manual_seed(seed)
    img = torch.zeros(3, height, width)
    out = []
    for _ in range(n):
        i, j, h, w, _v = tv.transforms.RandomErasing.get_params(
            img, scale=scale, ratio=ratio, value=[0])
        out.append(None if (h, w) == (height, width) else (i, j, h, w))
    return out


@pytest.mark.parametrize("height,width,scale,ratio", [
    (160, 224, (0.02, 0.33), (0.3, 3.3)),   # torchvision's defaults
    (32, 32, (0.02, 0.33), (0.3, 3.3)),     # the rounding of small boxes
    (224, 224, (0.1, 0.5), (0.5, 1.0)),
])
def test_erasing_boxes_follow_torchvision_get_params(height, width, scale,
                                                     ratio):
    """RandomErasing(p, scale, ratio): erasing as often as p times
    get_params' chance of a box in ten tries, and boxes whose area
    fraction, log-aspect (uniform before the tries reject), height, width
    and position have torchvision's means (within 5 standard errors of
    torchvision's own draws, seeded)."""
    n, p = 12000, 0.5
    draws = _recipe_draws(n, width=width, height=height, **{
        "augment.erasing": p,
        "augment.erasing_scale": "%g, %g" % scale,
        "augment.erasing_ratio": "%g, %g" % ratio})
    boxes = [d["erase"] for d in draws if d["erase"] is not None]
    ref = _tv_erase_boxes(n, height, width, scale, ratio)
    found = sum(b is not None for b in ref) / n
    want = p * found
    se = math.sqrt(n * want * (1 - want)) + math.sqrt(n * p * p * found * (1 - found))
    assert abs(len(boxes) - n * want) <= 5 * se, (len(boxes), n * want)
    ref = [b for b in ref if b is not None]
    area = height * width
    for i, j, h, w in boxes:
        assert 0 < h < height and 0 < w < width, (h, w)
        assert 0 <= i <= height - h and 0 <= j <= width - w, (i, j, h, w)
        # the rounding of each side moves the area and the aspect a little
        slack = (0.5 * (h + w + 1) + 0.25) / area
        assert scale[0] - slack <= h * w / area <= scale[1] + slack, (h, w)
        la, d = math.log(h / w), 0.5 / (h - 0.5) + 0.5 / (w - 0.5)
        assert math.log(ratio[0]) - d <= la <= math.log(ratio[1]) + d, (h, w)

    def stats(bs):
        b = np.array(bs, float)
        return {"area": b[:, 2] * b[:, 3] / area,
                "log_aspect": np.log(b[:, 2] / b[:, 3]),
                "h": b[:, 2], "w": b[:, 3],
                "top": b[:, 0] / np.maximum(height - b[:, 2], 1),
                "left": b[:, 1] / np.maximum(width - b[:, 3], 1)}
    got, exp = stats(boxes), stats(ref)
    for key in got:
        ok, info = _close_means(got[key], exp[key])
        assert ok, (key, info)
    # the log-aspect's spread: quarters of the range as often as torchvision
    edges = np.linspace(math.log(ratio[0]), math.log(ratio[1]), 5)
    edges[0], edges[-1] = -np.inf, np.inf
    g = np.histogram(got["log_aspect"], edges)[0] / len(boxes)
    e = np.histogram(exp["log_aspect"], edges)[0] / len(ref)
    sd = np.sqrt(g * (1 - g) / len(boxes) + e * (1 - e) / len(ref))
    assert (np.abs(g - e) <= 5 * sd + 1e-9).all(), (g, e)


def test_erasing_random_is_per_pixel_normal_noise_in_the_drawn_box(opts):
    """erasing_value = random is value='random' (normal_() after
    Normalize): on fp32 batches the loader's samples are the plain ones
    but in the box draw_recipe names, where the values are N(0, 1)."""
    er = {"augment.erasing": 0.7, "augment.erasing_value": "random"}
    base = {"loader.order": "sequential", "augment.flip": 0.0,
            "loader.workers": 2, "augment.dtype": "fp32"}
    got = _batches(opts(**base, **er))
    plain = _batches(opts(**base))
    noise, erased = [], 0
    for (xa, ia), (xb, ib) in zip(got, plain):
        xa = xa.view(np.float32).reshape(-1, 3, 32, 32)
        xb = xb.view(np.float32).reshape(-1, 3, 32, 32)
        for k, index in enumerate(ia):
            d = A.draw_recipe(None, epoch=0, index=int(index), width=32,
                              height=32, **{"loader.seed": 7}, **er)
            mask = np.zeros((32, 32), bool)
            if d["erase"] is not None:
                i, j, h, w = d["erase"]
                mask[i:i + h, j:j + w] = True
                erased += 1
            assert (xa[k][:, ~mask] == xb[k][:, ~mask]).all(), index
            noise.append(xa[k][:, mask].ravel())
    x = np.concatenate(noise).astype(float)
    n = len(x)
    assert erased > 50 and n > 10000, (erased, n)
    assert abs(x.mean()) <= 5 / math.sqrt(n), x.mean()
    assert abs(x.var() - 1) <= 5 * math.sqrt(2 / n), x.var()
    inside = np.mean(np.abs(x) < 1)  # 68.27% of a normal within one sigma
    assert abs(inside - 0.6827) <= 5 * math.sqrt(0.6827 * 0.3173 / n), inside
