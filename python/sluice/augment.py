"""The per-sample augmentation ops the loader's workers run, on one image.

    import numpy as np, sluice.augment as A
    out = A.apply("rotate", img, angle=30, interpolation="bilinear")
    out = A.apply("adjust_hue", img, hue_factor=0.1)
    A.draw("train.ini", epoch=0, index=7)   # [("Rotate", -12.0), ...]
    A.draw_recipe("train.ini", epoch=0, index=7)["erase"]  # (i, j, h, w)

Each op is torchvision's functional op on a uint8 tensor, with its
parameter names (torchvision.transforms.functional: angle, translate,
scale, shear, interpolation, fill, center, brightness_factor, ...,
hue_factor, sharpness_factor, bits, threshold, kernel_size, sigma, and
i, j, h, w, v for erase). Images are uint8 NumPy arrays of shape (H, W),
(H, W, 1) or (H, W, 3); ``apply`` returns a new array of the same shape.
"""

from . import _sluice

__all__ = ["apply", "apply_boxes", "draw", "draw_recipe", "OPS", "BOX_OPS"]


def _op_table():
    """OPS and BOX_OPS from the C library's table (sl_augment_op_get):
    each op's parameters are "keyword" or "keyword:field" words."""
    ops, box_ops = {}, []
    for name, params, moves_boxes in _sluice._augment_ops():
        ops[name] = dict((w.split(":") + [w])[:2] for w in params.split())
        if moves_boxes:
            box_ops.append(name)
    return ops, tuple(box_ops)


# op -> its keyword parameters (torchvision's names), each mapped to the
# field of sl_augment_args it sets; BOX_OPS: the ops that move detection
# boxes (apply_boxes).
OPS, BOX_OPS = _op_table()

_STATUS_ERRORS = {
    2: "InvalidArgumentError", 3: "OutOfMemoryError", 5: "ConfigError",
}


def _raise(status, message):
    import sluice
    name = _STATUS_ERRORS.get(status)
    cls = getattr(sluice, name, None) if name else None
    raise (cls or sluice.Error)(message)


def _interpolation(v):
    v = getattr(v, "value", v)  # torchvision's InterpolationMode
    if v in (0, "nearest"):
        return 0
    if v in (1, "bilinear"):
        return 1
    raise ValueError("interpolation: %r (nearest or bilinear)" % (v,))


def _field_value(op, key, value):
    """The value of sl_augment_args's field for torchvision's argument."""
    if key == "interpolation":
        return _interpolation(value)
    if key == "shear":
        if op == "shear_y":
            return [0.0, float(value)]
        if isinstance(value, (int, float)):
            return [float(value), 0.0]  # F.affine: a number shears x
        return [float(x) for x in value]
    if key == "translate":
        if op == "translate_y":
            return [0.0, float(value)]
        if isinstance(value, (int, float)):
            return [float(value), 0.0]
        return [float(x) for x in value]
    if key == "center":
        return [float(x) for x in value]
    if key == "kernel_size":
        if isinstance(value, int):
            return [value, value]
        return [int(x) for x in value]
    if key == "sigma":
        if isinstance(value, (int, float)):
            return [float(value), float(value)]
        return [float(x) for x in value]
    if key in ("fill", "v"):
        if hasattr(value, "tolist"):  # a tensor or array
            value = value.tolist()
        if isinstance(value, (int, float)):
            return [float(value)] * 3
        flat = [float(x) for x in _flatten(value)]
        return flat * 3 if len(flat) == 1 else flat
    if key in ("bits", "i", "j", "h", "w"):
        return int(value)
    return float(value)


def _flatten(v):
    for x in v:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def apply(name, image, **params):
    """Runs op ``name`` on ``image`` (uint8, HW, HW1 or HWC with C = 3)
    and returns the result as a new array. Raises InvalidArgumentError for
    an unknown op or a bad parameter, TypeError for a parameter the op
    does not take."""
    import numpy as np
    if name not in OPS:
        _raise(2, "unknown op %r (%s)" % (name, ", ".join(OPS)))
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise TypeError("image: dtype %s (uint8 only)" % arr.dtype)
    if arr.ndim == 2:
        h, w, c = arr.shape[0], arr.shape[1], 1
    elif arr.ndim == 3 and arr.shape[2] in (1, 3):
        h, w, c = arr.shape
    else:
        raise ValueError("image: shape %r (H, W) or (H, W, 1 or 3)"
                         % (arr.shape,))
    fields = {}
    allowed = OPS[name]
    for k, v in params.items():
        if k not in allowed:
            raise TypeError("%s() takes no parameter %r (it takes %s)"
                            % (name, k, ", ".join(allowed) or "none"))
        if v is None and k in ("fill", "center"):
            continue  # torchvision's default: none
        fields[allowed[k]] = _field_value(name, k, v)
    out = np.ascontiguousarray(arr).copy()
    res = _sluice._augment_apply(name, out, h, w, c, fields)
    if res is not None:
        _raise(*res)
    return out


def apply_boxes(name, boxes, height, width, **params):
    """Moves detection boxes (an (N, 4) array of x0, y0, x1, y1 in the
    pixel-edge coordinates of a ``width`` x ``height`` image) as op
    ``name`` moves that image's pixels, with ``apply``'s parameters: each
    box becomes the enclosing box of its four mapped corners, clipped to
    the image (torchvision v2's affine on BoundingBoxes), as the loader
    moves a sample's boxes. Returns a new float32 (N, 4) array."""
    import numpy as np
    if name not in BOX_OPS:
        _raise(2, "%r does not move boxes (%s)" % (name, ", ".join(BOX_OPS)))
    arr = np.array(boxes, dtype=np.float32, copy=True).reshape(-1, 4)
    fields = {}
    allowed = OPS[name]
    for k, v in params.items():
        if k not in allowed:
            raise TypeError("%s() takes no parameter %r (it takes %s)"
                            % (name, k, ", ".join(allowed) or "none"))
        if v is None and k in ("fill", "center"):
            continue
        fields[allowed[k]] = _field_value(name, k, v)
    arr = np.ascontiguousarray(arr)
    res = _sluice._augment_boxes(name, arr, arr.shape[0], int(height),
                                 int(width), fields)
    if res is not None:
        _raise(*res)
    return arr


def draw(config=None, epoch=0, index=0, width=224, height=224, **options):
    """The ops the config's ``augment.auto`` policy draws for sample
    ``index`` of ``epoch`` at ``width`` x ``height`` (as the workers draw
    them): a list of (torchvision op name, magnitude). ``config`` and
    ``options`` as for sluice.Loader."""
    from . import _resolve_options
    path, pairs = _resolve_options(config, options)
    status, value = _sluice._augment_draw(path, pairs, int(epoch), int(index),
                                          int(width), int(height))
    if status != 0:
        _raise(status, value)
    return value


def draw_recipe(config=None, epoch=0, index=0, width=224, height=224,
                **options):
    """Everything the config's recipe draws for sample ``index`` of
    ``epoch`` at ``width`` x ``height``, as the workers draw it: a dict
    with ``steps`` (as ``draw``), ``jitter`` (None when ColorJitter is not
    applied, else {"order": the four names in ColorJitter.get_params's
    fn_idx order, "factors": {"brightness": .., "contrast": ..,
    "saturation": .., "hue": ..}}; an unconfigured factor is 1, hue's 0,
    and is skipped), ``grayscale`` (bool), ``blur_sigma`` (None or the
    sigma) and ``erase`` (None or RandomErasing's box (i, j, h, w))."""
    from . import _resolve_options
    path, pairs = _resolve_options(config, options)
    status, value = _sluice._augment_draw(path, pairs, int(epoch), int(index),
                                          int(width), int(height), True)
    if status != 0:
        _raise(status, value)
    return value
