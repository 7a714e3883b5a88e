"""pylucid.save / pylucid.load: bit-exact round trips for every dtype, nested state dicts,
safetensors compatibility, and clear errors on corrupt or truncated files."""
import io
import json
import struct
from collections import OrderedDict

import numpy as np
import pylucid
import pytest
from pylucid import nn, optim

RNG = np.random.default_rng(3)


def raw_bits(t):
    """The tensor's bytes, viewed as unsigned ints of its item size (bit-exact comparison)."""
    t = t.contiguous()
    if t.dtype == pylucid.bfloat16:
        # reinterpret through float32: the bf16 bits are the top 16 bits of the float32 value
        f = np.asarray(t.float().numpy(), dtype=np.float32)
        return f.view(np.uint32) >> 16
    a = t.numpy()
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def special_values(dtype):
    vals = [0.0, -0.0, 1.0, -2.5, 3.0e-8, 6.1e-5, 1e-40, 65504.0, float("inf"), float("-inf"), float("nan")]
    if dtype == pylucid.float16:
        return pylucid.tensor(np.array(vals, dtype=np.float16))
    t = pylucid.tensor(np.array(vals, dtype=np.float64), dtype=dtype)
    return t


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_round_trip_is_bit_exact(tmp_path, dtype):
    """Guards against a save path that converts through another dtype (changing NaN payloads,
    -0.0, subnormals) or writes bfloat16 as anything but its raw bits."""
    dt = getattr(pylucid, dtype)
    x = pylucid.tensor(RNG.standard_normal((4, 5)), dtype=dt)
    s = special_values(dt)
    pylucid.save({"x": x, "special": s}, tmp_path / "f.safetensors")
    out = pylucid.load(tmp_path / "f.safetensors")
    for a, b in ((x, out["x"]), (s, out["special"])):
        assert b.dtype == dt and b.shape == a.shape
        np.testing.assert_array_equal(raw_bits(a), raw_bits(b))


def test_int_bool_and_shapes_round_trip(tmp_path):
    """Guards against int64 extremes, bools, 0-d and empty tensors being mangled."""
    obj = {
        "i": pylucid.tensor(np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max])),
        "b": pylucid.tensor([[True, False, True]]),
        "scalar": pylucid.tensor(3.5),
        "empty": pylucid.zeros(0, 3),
        "bf_empty": pylucid.zeros(2, 0, dtype=pylucid.bfloat16),
    }
    pylucid.save(obj, tmp_path / "x")
    out = pylucid.load(tmp_path / "x")
    assert list(out) == list(obj)
    for k, t in obj.items():
        assert out[k].dtype == t.dtype and out[k].shape == t.shape
    assert out["i"].tolist() == obj["i"].tolist() and out["b"].tolist() == [[True, False, True]]
    assert out["scalar"].item() == 3.5


def test_non_contiguous_and_requires_grad_tensors(tmp_path):
    """Guards against writing a strided view's underlying storage instead of its elements."""
    base = pylucid.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    w = nn.Parameter(pylucid.ones(2))
    pylucid.save({"v": view, "w": w}, tmp_path / "x")
    out = pylucid.load(tmp_path / "x")
    assert out["v"].tolist() == view.tolist()
    assert not out["w"].requires_grad and out["w"].tolist() == [1.0, 1.0]


def test_nested_structures_round_trip(tmp_path):
    """Guards against losing non-tensor structure: int keys, tuples vs lists, None, floats
    (incl. nan/inf), strings, OrderedDict order, shared tensors."""
    shared = pylucid.ones(2)
    obj = {
        "state": {0: {"step": pylucid.tensor(3.0), "buf": shared}, 1: {"buf": shared}},
        "groups": [{"lr": 0.1, "betas": (0.9, 0.999), "nesterov": False, "name": "x", "none": None}],
        "od": OrderedDict([("z", 1), ("a", 2)]),
        "floats": [float("nan"), float("inf"), -float("inf"), 1e-300],
        "mixed_keys": {None: 1, True: 2, 2.5: 3},
        "nested": [[[pylucid.arange(3)]]],
    }
    pylucid.save(obj, tmp_path / "n")
    out = pylucid.load(tmp_path / "n")
    assert set(out["state"]) == {0, 1}
    assert out["state"][0]["buf"] is out["state"][1]["buf"]
    assert out["groups"][0]["betas"] == (0.9, 0.999) and isinstance(out["groups"][0]["betas"], tuple)
    assert out["groups"][0]["none"] is None and out["groups"][0]["nesterov"] is False
    assert isinstance(out["od"], OrderedDict) and list(out["od"]) == ["z", "a"]
    f = out["floats"]
    assert np.isnan(f[0]) and f[1] == float("inf") and f[2] == -float("inf") and f[3] == 1e-300
    assert out["mixed_keys"] == {None: 1, True: 2, 2.5: 3}
    assert out["nested"][0][0][0].tolist() == [0, 1, 2]
    # a bare tensor and plain values work too
    pylucid.save(pylucid.arange(4), tmp_path / "t")
    assert pylucid.load(tmp_path / "t").tolist() == [0, 1, 2, 3]
    pylucid.save([1, "a", None], tmp_path / "p")
    assert pylucid.load(tmp_path / "p") == [1, "a", None]


def test_file_objects(tmp_path):
    """Guards against save/load accepting only paths."""
    buf = io.BytesIO()
    pylucid.save({"a": pylucid.arange(3.0)}, buf)
    buf.seek(0)
    assert pylucid.load(buf)["a"].tolist() == [0.0, 1.0, 2.0]


def test_flat_dict_layout_is_safetensors(tmp_path):
    """Guards against a header that a safetensors reader would reject: little-endian u64 length,
    JSON with dtype/shape/data_offsets, string-only __metadata__, 8-byte aligned data."""
    obj = {"w": pylucid.ones(2, 3), "idx": pylucid.arange(4)}
    pylucid.save(obj, tmp_path / "s")
    data = (tmp_path / "s").read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0
    header = json.loads(data[8:8 + n])
    assert header["w"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["idx"] == {"dtype": "I64", "shape": [4], "data_offsets": [24, 56]}
    assert all(isinstance(v, str) for v in header["__metadata__"].values())
    assert len(data) == 8 + n + 56
    np.testing.assert_array_equal(np.frombuffer(data[8 + n + 24:], dtype="<i8"), [0, 1, 2, 3])


def test_interop_with_safetensors_package(tmp_path):
    """Guards against files that the reference safetensors implementation can't read, and
    against failing to read its files (incl. int32, widened to int64)."""
    st = pytest.importorskip("safetensors.numpy")
    obj = {"a": pylucid.tensor(RNG.standard_normal((3, 2))), "h": pylucid.ones(4, dtype=pylucid.float16),
           "m": pylucid.tensor([True, False])}
    pylucid.save(obj, tmp_path / "ours")
    theirs = st.load_file(str(tmp_path / "ours"))
    for k, t in obj.items():
        np.testing.assert_array_equal(theirs[k], t.numpy())
    st.save_file({"x": np.arange(6, dtype=np.int32).reshape(2, 3), "y": np.ones(2, np.float64)},
                 str(tmp_path / "theirs"))
    out = pylucid.load(tmp_path / "theirs")
    assert out["x"].dtype == pylucid.int64 and out["x"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out["y"].dtype == pylucid.float64


def test_model_and_optimizer_checkpoint(tmp_path):
    """Guards against a checkpoint that does not restore a model's exact outputs."""
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = optim.Adam(net.parameters(), lr=0.01)
    x = pylucid.randn(5, 3)
    net(x).sum().backward()
    opt.step()
    pylucid.save({"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 3}, tmp_path / "ckpt")
    ck = pylucid.load(tmp_path / "ckpt")
    net2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    net2.load_state_dict(ck["model"])
    opt2 = optim.Adam(net2.parameters(), lr=0.01)
    opt2.load_state_dict(ck["optim"])
    assert net2(x).tolist() == net(x).tolist() and ck["epoch"] == 3


def test_save_rejects_unsupported_objects(tmp_path):
    """Guards against save pickling arbitrary objects (load must never run code)."""
    with pytest.raises(pylucid.LucidError, match="cannot save an object of type object"):
        pylucid.save({"x": object()}, tmp_path / "bad")
    with pytest.raises(pylucid.LucidError, match="dict keys"):
        pylucid.save({(1, 2): 3}, tmp_path / "bad")
    with pytest.raises(pylucid.LucidError, match="state_dict"):
        pylucid.save(nn.Linear(2, 2), tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


# ---- corrupt and truncated files ---------------------------------------------------------------


def _good_bytes():
    buf = io.BytesIO()
    pylucid.save({"a": pylucid.arange(4.0), "b": pylucid.tensor([True, False])}, buf)
    return buf.getvalue()


def _with_header(header, data=b""):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def _load_bytes(tmp_path, data):
    p = tmp_path / "corrupt"
    p.write_bytes(data)
    return pylucid.load(p)


CORRUPT = [
    ("empty", lambda g: b"", "too short"),
    ("short", lambda g: g[:5], "too short"),
    ("huge_length", lambda g: struct.pack("<Q", 2 ** 63) + g[8:], "exceeds the file size"),
    ("length_past_end", lambda g: struct.pack("<Q", len(g)) + g[8:], "exceeds the file size"),
    ("truncated_data", lambda g: g[:-3], "outside the data buffer"),
    ("bad_json", lambda g: g[:8] + b"x" + g[9:], "not valid UTF-8 JSON"),
    ("json_array", lambda g: _with_header([1, 2]), "expected an object"),
    ("bad_utf8", lambda g: struct.pack("<Q", 2) + b"\xff\xfe", "not valid UTF-8 JSON"),
    ("unknown_dtype", lambda g: _with_header({"x": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
     "unsupported dtype"),
    ("wrong_size", lambda g: _with_header({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
     "needs 8 bytes"),
    ("negative_offset", lambda g: _with_header({"x": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}),
     "outside the data buffer"),
    ("bad_shape", lambda g: _with_header({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}),
     "invalid shape"),
    ("missing_field", lambda g: _with_header({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
     "exactly dtype, shape and data_offsets"),
    ("trailing_bytes", lambda g: g + b"\0" * 8, "trailing garbage"),
    ("bad_bool", lambda g: _with_header({"x": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07"),
     "bytes other than 0 and 1"),
    ("structure_missing_tensor",
     lambda g: _with_header({"__metadata__": {"pylucid.structure": '{"T":"nope"}'}}), "does not hold"),
    ("structure_bad_json", lambda g: _with_header({"__metadata__": {"pylucid.structure": "{"}}), "not valid JSON"),
    ("structure_bad_node", lambda g: _with_header({"__metadata__": {"pylucid.structure": '{"eval":"1"}'}}),
     "unrecognised structure node"),
]


@pytest.mark.parametrize("name,make,msg", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_files_raise_lucid_error(tmp_path, name, make, msg):
    """Guards against a corrupt or truncated checkpoint crashing, reading out of bounds, or
    loading garbage silently."""
    with pytest.raises(pylucid.LucidError, match=msg):
        _load_bytes(tmp_path, make(_good_bytes()))


def test_every_truncation_is_detected(tmp_path):
    """Guards against some truncation length slipping past the checks."""
    good = _good_bytes()
    for n in range(len(good)):
        with pytest.raises(pylucid.LucidError):
            pylucid.load(io.BytesIO(good[:n]))
