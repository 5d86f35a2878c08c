"""The renamed keys from Python: dataset.entries and dataset.axis_order
(full keys and keywords), their old names (dataset.layout,
dataset.array_layout) still taken and meaning the same, and both names at
once refused with a message naming both."""

import pytest

import sluice


def test_new_keywords_are_listed_and_old_ones_are_not():
    names = sluice.option_names()
    assert names["entries"] == "dataset.entries"
    assert names["dataset_entries"] == "dataset.entries"
    assert names["axis_order"] == "dataset.axis_order"
    assert "array_layout" not in names and "dataset_layout" not in names
    keys = {o[0] for o in sluice.options()}
    assert "dataset.entries" in keys and "dataset.layout" not in keys


@pytest.mark.parametrize("given", [
    {"entries": "sluice"}, {"dataset_entries": "sluice"},
    {"dataset.entries": "sluice"}, {"dataset_layout": "sluice"},
    {"dataset.layout": "sluice"}])
def test_old_and_new_names_read_the_file_alike(opts, given):
    o = opts()
    keywords = {k: v for k, v in given.items() if "." not in k}
    o.update({k: v for k, v in given.items() if "." in k})
    with sluice.Loader(o, **keywords) as ld:
        ld.set_epoch(0)
        ld.next()
        st = ld.state_dict()
    # A state saved under one name resumes under the other.
    with sluice.Loader(opts(**{"dataset.entries": "sluice"})) as other:
        other.load_state_dict(st)


@pytest.mark.parametrize("old,new", [
    ({"dataset_layout": "caffe"}, {"entries": "caffe"}),
    ({"array_layout": "nchw"}, {"axis_order": "nchw"}),
    ({"dataset_array_layout": "nchw"}, {"dataset.axis_order": "nchw"})])
def test_old_and_new_names_mean_the_same(opts, old, new):
    # A wrong kind forced on a sluice file fails the same way by either
    # name (or passes alike for an option the file does not read).
    def outcome(kw):
        o = opts()
        o.update({k: v for k, v in kw.items() if "." in k})
        try:
            with sluice.Loader(o, **{k: v for k, v in kw.items()
                                     if "." not in k}) as ld:
                return ("ok", len(ld))
        except sluice.Error as e:
            return (type(e).__name__, str(e))
    assert outcome(old) == outcome(new)


def test_both_names_refused_naming_both(opts):
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(opts(**{"dataset.layout": "sluice"}), entries="sluice")
    assert "dataset.layout and dataset.entries are one key" in str(e.value)
    with pytest.raises(sluice.ConfigError) as e:
        sluice.Loader(opts(), array_layout="nhwc", axis_order="nhwc")
    assert "dataset.array_layout and dataset.axis_order" in str(e.value)


def test_ini_old_name_then_keyword_new_name(opts, tmp_path):
    # The keywords win over the file whatever name each uses.
    ini = tmp_path / "old.ini"
    ini.write_text("[dataset]\nlayout = caffe\n")
    keywords = {k.replace(".", "_"): v for k, v in opts().items()}
    with sluice.Loader(str(ini), entries="sluice", **keywords) as ld:
        assert len(ld) > 0
