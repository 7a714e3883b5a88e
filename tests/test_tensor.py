"""Tensor creation, properties, numpy / DLPack interop, repr."""
import numpy as np
import pytest

import pylucid


def test_creation_functions():
    assert pylucid.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert pylucid.ones((2,)).dtype == pylucid.float32
    assert pylucid.full((2,), 7).dtype == pylucid.int64
    assert pylucid.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert pylucid.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert pylucid.arange(1.0, 2.0, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert pylucid.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert pylucid.empty(0, 3).shape == (0, 3)
    assert pylucid.zeros_like(pylucid.ones(2, dtype=pylucid.float64)).dtype == pylucid.float64
    r = pylucid.randint(0, 10, (100,))
    assert r.dtype == pylucid.int64 and 0 <= min(r.tolist()) and max(r.tolist()) < 10


def test_tensor_dtype_inference():
    assert pylucid.tensor([1, 2]).dtype == pylucid.int64
    assert pylucid.tensor([1.0, 2]).dtype == pylucid.float32
    assert pylucid.tensor([True]).dtype == pylucid.bool
    assert pylucid.tensor(np.zeros(2)).dtype == pylucid.float64
    assert pylucid.tensor(3.5).shape == ()
    assert pylucid.tensor([1.0], dtype=pylucid.bfloat16).dtype == pylucid.bfloat16


def test_negative_size_and_ragged_data_raise():
    with pytest.raises(pylucid.ShapeMismatch, match="negative dimension"):
        pylucid.zeros(2, -1)
    with pytest.raises(pylucid.ShapeMismatch):
        pylucid.tensor([[1, 2], [3]])


def test_seeded_random_is_reproducible():
    pylucid.manual_seed(123)
    a = pylucid.randn(5).tolist()
    pylucid.manual_seed(123)
    assert pylucid.randn(5).tolist() == a
    u = pylucid.rand(10000)
    assert 0.0 <= min(u.tolist()) and max(u.tolist()) < 1.0
    n = np.asarray(pylucid.randn(20000))
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


def test_from_numpy_is_zero_copy_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = pylucid.from_numpy(a)
    a[0, 0] = 42.0
    assert t.tolist()[0][0] == 42.0
    b = t.numpy()
    assert np.shares_memory(a, b)
    assert np.shares_memory(np.asarray(t), a)


def test_from_numpy_non_contiguous_view():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = pylucid.from_numpy(a)
    assert t.tolist() == a.tolist()
    assert not t.is_contiguous()


def test_numpy_refuses_requires_grad():
    with pytest.raises(pylucid.LucidError, match="detach"):
        pylucid.ones(2, requires_grad=True).numpy()


def test_array_protocol_numpy2_copy_keyword():
    t = pylucid.ones(3)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    c = np.array(t, copy=True)
    c[0] = 5
    assert t.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError):
        np.asarray(pylucid.ones(2, dtype=pylucid.bfloat16), copy=False)


def test_dlpack_roundtrip_with_numpy():
    t = pylucid.arange(6.0)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    back = pylucid.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr()
    assert t.__dlpack_device__() == (1, 0)
    cap = t.__dlpack__(max_version=(1, 0))
    assert cap is not None


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = pylucid.arange(4.0)
    tt = torch.from_dlpack(t)
    tt[0] = 9.0
    assert t.tolist()[0] == 9.0
    back = pylucid.from_dlpack(torch.arange(3, dtype=torch.float64))
    assert back.dtype == pylucid.float64 and back.tolist() == [0.0, 1.0, 2.0]


def test_properties_and_item():
    t = pylucid.ones(2, 3, dtype=pylucid.float64)
    assert t.shape == (2, 3) and t.ndim == 2 and t.numel() == 6 and t.size(1) == 3
    assert t.is_contiguous() and t.stride() == (3, 1)
    assert pylucid.tensor(2.5).item() == 2.5
    assert isinstance(pylucid.tensor(3).item(), int)
    with pytest.raises(pylucid.ShapeMismatch, match="one-element"):
        t.item()
    assert float(pylucid.tensor([1.5])) == 1.5


def test_conversions():
    t = pylucid.tensor([1.5, -2.25])
    assert t.double().dtype == pylucid.float64
    assert t.half().dtype == pylucid.float16
    assert t.bfloat16().float().tolist() == [1.5, -2.25]
    assert t.long().tolist() == [1, -2]


def test_half_rounding_is_nearest_even():
    """Guards against truncating float -> float16/bfloat16 conversions."""
    vals = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65519.0, 65520.0, 1e-8, 6e-8], dtype=np.float32)
    got = np.asarray(pylucid.tensor(vals).half())
    with np.errstate(over="ignore"):  # 65520 rounds to inf in numpy too
        want = vals.astype(np.float16)
    np.testing.assert_array_equal(got, want)
    b = pylucid.tensor([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8]).bfloat16().float().tolist()
    assert b == [1.0, 1.0 + 2 ** -6]


def test_repr_is_readable():
    assert repr(pylucid.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    r = repr(pylucid.ones(2, requires_grad=True))
    assert "requires_grad=True" in r
    assert "dtype=pylucid.float64" in repr(pylucid.ones(1, dtype=pylucid.float64))
    assert "grad_fn=<MulBackward0>" in repr(pylucid.ones(1, requires_grad=True) * 2.0)
