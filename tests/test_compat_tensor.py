"""PyTorch's Tensor surface: devices and dtypes as PyTorch spells them, legacy constructors,
new_* factories, repeat/tile/flip/roll, comparison and logical functions, exact int conversion,
.data, grad-mode decorators, and copy.deepcopy/pickle of tensors, Parameters, Modules and
optimizers. Each checked against torch where it is installed, else against numpy."""
import copy
import pickle

import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def test_devices_are_accepted_as_pytorch_spells_them():
    """Guards against device-selection code (torch.device(...), .to(device), device=) stopping a
    CPU program, and against a non-CPU device being silently accepted."""
    dev = pylucid.device("cuda" if pylucid.cuda.is_available() else "cpu")
    assert dev == "cpu" and dev.type == "cpu" and dev.index is None and repr(dev) == "device(type='cpu')"
    assert pylucid.device("cpu:0").index == 0 and pylucid.device("cpu", 0) == pylucid.device("cpu:0")
    assert not pylucid.backends.mps.is_available() and pylucid.cuda.device_count() == 0
    pylucid.cuda.manual_seed_all(0)
    pylucid.backends.cudnn.deterministic = True
    for make in (lambda d: pylucid.zeros(2, 3, device=d), lambda d: pylucid.ones((2,), device=d),
                 lambda d: pylucid.tensor([1.0], device=d), lambda d: pylucid.arange(3, device=d),
                 lambda d: pylucid.full((2,), 1.5, device=d), lambda d: pylucid.rand(2, device=d),
                 lambda d: pylucid.randn(2, device=d), lambda d: pylucid.randint(0, 3, (2,), device=d),
                 lambda d: pylucid.empty(2, device=d), lambda d: pylucid.linspace(0, 1, 3, device=d),
                 lambda d: pylucid.eye(2, device=d), lambda d: pylucid.zeros_like(pylucid.ones(2), device=d),
                 lambda d: pylucid.randperm(3, device=d), lambda d: pylucid.ones(2).to(d),
                 lambda d: pylucid.ones(2).new_zeros(3, device=d)):
        for d in ("cpu", "cpu:0", dev, None):
            assert make(d).device == "cpu"
        with pytest.raises(pylucid.LucidError, match="cuda"):
            make("cuda")
    x = pylucid.ones(2)
    assert x.cpu() is x and x.device.type == "cpu" and not x.is_cuda and x.get_device() == -1
    assert x.to(dev, pylucid.float64).dtype == pylucid.float64
    assert x.to("cpu", non_blocking=True) is x and x.to(dev, copy=True) is not x
    with pytest.raises(pylucid.LucidError, match="mps"):
        x.to(device="mps")
    with pytest.raises(pylucid.LucidError, match="cuda"):
        x.cuda()
    with pytest.raises(pylucid.LucidError, match="cuda:1"):
        pylucid.device("cuda:1")


def test_dtype_aliases_and_default_dtype():
    """Guards against torch.float/long/int/double spellings or set_default_dtype being missing."""
    assert pylucid.float is pylucid.float32 and pylucid.double is pylucid.float64
    assert pylucid.long is pylucid.int64 and pylucid.int is pylucid.int64 and pylucid.int32 is pylucid.int64
    assert pylucid.half is pylucid.float16
    pylucid.set_default_dtype(pylucid.float64)
    try:
        assert pylucid.get_default_dtype() == pylucid.float64
        for t in (pylucid.tensor([1.5]), pylucid.zeros(2), pylucid.rand(2), pylucid.arange(0.0, 1.0, 0.5),
                  pylucid.full((1,), 2.0), pylucid.Tensor([1, 2]), pylucid.eye(2)):
            assert t.dtype == pylucid.float64
        assert pylucid.full((1,), 2).dtype == pylucid.int64 and pylucid.tensor([1]).dtype == pylucid.int64
    finally:
        pylucid.set_default_dtype(pylucid.float32)
    with pytest.raises(TypeError):
        pylucid.set_default_dtype(pylucid.int64)
    pylucid.set_default_device("cpu")
    with pytest.raises(pylucid.LucidError):
        pylucid.set_default_device("cuda")


def test_legacy_constructors():
    """Guards against Tensor([..]), Tensor(2, 3), FloatTensor/LongTensor/BoolTensor failing, or
    Parameter's Tensor(data, requires_grad) path breaking."""
    t = pylucid.Tensor([[1, 2], [3, 4]])
    assert t.dtype == pylucid.float32 and t.tolist() == [[1, 2], [3, 4]]
    assert pylucid.Tensor(2, 3).shape == (2, 3) and pylucid.Tensor().shape == (0,)
    assert pylucid.Tensor(np.arange(3)).dtype == pylucid.float32
    assert pylucid.LongTensor([1, 2]).dtype == pylucid.int64 and pylucid.LongTensor(4).shape == (4,)
    assert pylucid.BoolTensor([True, False]).dtype == pylucid.bool
    assert pylucid.FloatTensor(pylucid.tensor([1, 2])).dtype == pylucid.float32
    assert pylucid.DoubleTensor([1]).dtype == pylucid.float64
    assert isinstance(pylucid.ones(2), pylucid.FloatTensor) and not isinstance(pylucid.ones(2), pylucid.LongTensor)
    base = pylucid.ones(3)
    alias = pylucid.Tensor(base)
    alias[0] = 5
    assert base[0].item() == 5
    p = pylucid.nn.Parameter(pylucid.zeros(2))
    assert p.requires_grad and p.is_leaf
    assert pylucid.Size([2, 3]) == (2, 3) and pylucid.Size([2, 3]).numel() == 6
    with pytest.raises(TypeError):
        pylucid.Tensor("abc", 3)
    assert pylucid.ones(2).type() == "pylucid.FloatTensor"
    assert pylucid.ones(2).type(pylucid.LongTensor).dtype == pylucid.int64
    assert pylucid.ones(2).type("torch.DoubleTensor").dtype == pylucid.float64


def test_data_is_a_detached_alias_and_assignable():
    """Guards against .data copying (updates through it must reach the parameter) or assigning
    .data dropping the tensor's requires_grad."""
    w = pylucid.nn.Parameter(pylucid.ones(3))
    d = w.data
    assert not d.requires_grad and d.grad_fn is None
    d.mul_(2)
    assert w.tolist() == [2, 2, 2]
    w.data = pylucid.zeros(2, 2)
    assert w.shape == (2, 2) and w.requires_grad and w.tolist() == [[0, 0], [0, 0]]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [[3, 3], [3, 3]]


def test_new_factories_and_shape_methods():
    """Guards against new_* ignoring self's dtype, and repeat/tile/flip/roll disagreeing with numpy."""
    x = pylucid.tensor([[1, 2, 3], [4, 5, 6]])
    assert x.new_zeros(2).dtype == pylucid.int64 and x.new_ones((2, 2)).tolist() == [[1, 1], [1, 1]]
    assert x.new_full((2,), 7).tolist() == [7, 7] and x.new_empty(3).shape == (3,)
    assert x.new_tensor([1.5]).dtype == pylucid.int64 and x.new_zeros(2, dtype=pylucid.float64).dtype == pylucid.float64
    a = x.numpy()
    assert x.repeat(2, 3).tolist() == np.tile(a, (2, 3)).tolist()
    assert x.repeat(2, 1, 2).tolist() == np.tile(a, (2, 1, 2)).tolist()
    assert pylucid.tile(x, (2,)).tolist() == np.tile(a, (1, 2)).tolist()
    assert x.flip(0).tolist() == a[::-1].tolist() and pylucid.flip(x, (0, 1)).tolist() == a[::-1, ::-1].tolist()
    assert pylucid.fliplr(x).tolist() == np.fliplr(a).tolist() and pylucid.flipud(x).tolist() == np.flipud(a).tolist()
    for shifts, dims in [(1, 1), (-1, 0), ((1, 2), (0, 1)), (4, None), (0, 1)]:
        assert pylucid.roll(x, shifts, dims).tolist() == np.roll(a, shifts, dims).tolist()
    assert x.T.tolist() == a.T.tolist() and x.mT.tolist() == a.T.tolist()
    assert pylucid.repeat_interleave(x, 2, dim=0).tolist() == np.repeat(a, 2, 0).tolist()
    assert x.repeat_interleave(pylucid.tensor([1, 0, 2]), dim=1).tolist() == np.repeat(a, [1, 0, 2], 1).tolist()
    with pytest.raises(ValueError):
        x.repeat(2)
    with pytest.raises(IndexError):
        x.flip(2)


@pytest.mark.parametrize("fn", [lambda t: t.repeat(2, 1, 3), lambda t: pylucid.tile(t, (2, 2)),
                                lambda t: t.flip(0, 1), lambda t: t.tile(2, 1),
                                lambda t: pylucid.roll(t, (1, -1), (0, 1)), lambda t: pylucid.roll(t, 2),
                                lambda t: t.repeat_interleave(2, dim=1)])
def test_shape_composites_gradcheck(fn):
    """Guards against the composites' gradients (sums over the copies) being wrong, in float64,
    on a non-contiguous input, and accumulating over two backward calls."""
    base = pylucid.tensor(np.random.default_rng(0).standard_normal((3, 2)), dtype=pylucid.float64)
    x = base.t().detach().requires_grad_()
    assert gradcheck(fn, [x])
    fn(x).sum().backward()
    g1 = x.grad.clone()
    fn(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 2 * g1.numpy())


def test_comparisons_and_logical_ops_match_numpy():
    """Guards against comparison/logical functions or methods returning the wrong dtype or values."""
    a, b = np.array([1.0, 2.0, np.nan, 4.0]), np.array([1.0, 3.0, np.nan, 0.0])
    x, y = pylucid.tensor(a), pylucid.tensor(b)
    for name, ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                      ("gt", np.greater), ("ge", np.greater_equal), ("greater", np.greater),
                      ("less_equal", np.less_equal)]:
        for out in (getattr(pylucid, name)(x, y), getattr(x, name)(y)):
            assert out.dtype == pylucid.bool and out.tolist() == ref(a, b).tolist()
    for name, ref in [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]:
        assert getattr(pylucid, name)(x, y).tolist() == ref(a, b).tolist()
    assert pylucid.logical_not(y).tolist() == np.logical_not(b).tolist()
    m1, m2 = x > 1, y > 0
    assert (m1 & m2).tolist() == (~(~m1 | ~m2)).tolist() and (m1 ^ m2).dtype == pylucid.bool
    assert pylucid.equal(x[:2], x[:2].clone()) and not pylucid.equal(x, x[:2].clone())
    assert pylucid.isclose(x, x + 1e-9).tolist() == [True, True, False, True]
    assert pylucid.isclose(x, x, equal_nan=True).tolist() == [True] * 4
    assert pylucid.allclose(pylucid.ones(2), pylucid.ones(2) + 1e-6) and not x.allclose(y)
    with pytest.raises(TypeError):
        pylucid.eq(x, "a")


def test_int_float_bool_index_conversions():
    """Guards against int() going through a double (inexact beyond 2**53) and __index__ accepting
    floats."""
    big = 2**62 + 1
    t = pylucid.tensor(big)
    assert int(t) == big and t.item() == big and t.__index__() == big and [0, 1, 2][pylucid.tensor(2)] == 2
    assert int(pylucid.tensor(-2.7)) == -2 and float(pylucid.tensor(3)) == 3.0 and bool(pylucid.tensor(True))
    assert type(int(pylucid.tensor(True))) is int
    with pytest.raises(TypeError):
        [1, 2][pylucid.tensor(1.0)]
    with pytest.raises(ValueError):
        int(pylucid.tensor(float("nan")))


def test_methods_for_module_functions():
    """Guards against functions PyTorch also offers as methods missing as methods here."""
    x = pylucid.tensor([1.0, 4.0])
    assert x.pow(2).tolist() == [1, 16] and x.add(1, alpha=2).tolist() == [3, 6]
    assert x.sub(x).tolist() == [0, 0] and x.mul(2).tolist() == [2, 8] and x.div(2).tolist() == [0.5, 2]
    assert x.maximum(pylucid.tensor([2.0, 2.0])).tolist() == [2, 4] and x.square().tolist() == [1, 16]
    assert pylucid.add(x, x, alpha=-1).tolist() == [0, 0] and pylucid.rsub(x, 5).tolist() == [4, 1]
    y = x.clone()
    y.sqrt_()
    assert y.tolist() == [1, 2]
    assert x.clone().exp_().allclose(x.exp())


def test_grad_mode_decorators():
    """Guards against no_grad/inference_mode not working as bare or called decorators."""
    x = pylucid.ones(2, requires_grad=True)

    @pylucid.no_grad()
    def f(t):
        return t * 2

    @pylucid.inference_mode
    def g(t):
        return t * 2

    @pylucid.inference_mode(False)
    def h(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and h(x).requires_grad
    with pylucid.inference_mode():
        assert pylucid.is_inference_mode_enabled() and not (x * 2).requires_grad
        with pylucid.inference_mode(False):
            assert not pylucid.is_inference_mode_enabled() and not pylucid.is_grad_enabled()
        assert pylucid.is_inference_mode_enabled()
    assert pylucid.is_grad_enabled() and not pylucid.is_inference_mode_enabled()


def test_no_grad_is_not_inference_mode():
    """Guards against is_inference_mode_enabled() being True inside no_grad (PyTorch: False) or
    staying True after an inference_mode block that raised."""
    with pylucid.no_grad():
        assert not pylucid.is_inference_mode_enabled()
    try:
        with pylucid.inference_mode():
            raise KeyError("x")
    except KeyError:
        pass
    assert not pylucid.is_inference_mode_enabled() and pylucid.is_grad_enabled()


def test_deepcopy_and_pickle_tensors():
    """Guards against copies sharing storage with the original or losing dtype, shape,
    requires_grad, grad or values (bfloat16 included)."""
    for d in (pylucid.float32, pylucid.float64, pylucid.bfloat16, pylucid.float16, pylucid.int64, pylucid.bool):
        t = pylucid.tensor([[1, 0], [3, 4]]).to(d).t()
        for c in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
            assert c.dtype == d and c.shape == t.shape and c.tolist() == t.tolist()
            assert c.data_ptr() != t.data_ptr()
    w = pylucid.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    for c in (copy.deepcopy(w), pickle.loads(pickle.dumps(w))):
        assert c.requires_grad and c.is_leaf and c.grad.tolist() == [2, 2, 2]
    with pytest.raises(pylucid.LucidError):
        copy.deepcopy(w * 2)
    shared = pylucid.ones(2)
    a, b = copy.deepcopy([shared, shared])
    assert a is b


def test_deepcopy_and_pickle_modules_and_optimizers():
    """Guards against a copied model or optimizer aliasing the original's parameters or state, or
    training differently from it."""
    pylucid.manual_seed(0)
    model = pylucid.nn.Sequential(pylucid.nn.Linear(4, 8), pylucid.nn.ReLU(), pylucid.nn.Linear(8, 2))
    opt = pylucid.optim.Adam(model.parameters(), lr=0.01)
    x = pylucid.randn(5, 4)
    model(x).pow(2).sum().backward()
    opt.step()
    for m2, o2 in [copy.deepcopy((model, opt)), pickle.loads(pickle.dumps((model, opt)))]:
        assert isinstance(m2[0].weight, pylucid.nn.Parameter) and m2[0].weight is not model[0].weight
        assert all(pylucid.equal(p, q) for p, q in zip(model.parameters(), m2.parameters()))
        assert o2.param_groups[0]["params"][0] is m2[0].weight
        ref = copy.deepcopy((model, opt))
        for mm, oo in ((m2, o2), ref):
            oo.zero_grad()
            mm(x).pow(2).sum().backward()
            oo.step()
        assert all(pylucid.allclose(p, q) for p, q in zip(ref[0].parameters(), m2.parameters()))
    assert all(pylucid.equal(p, q) for p, q in zip(model.parameters(), copy.deepcopy(model).parameters()))


@needs_torch
def test_surface_matches_torch():
    """Guards against results of the compat surface differing from PyTorch's in value or dtype."""
    a = np.arange(12).reshape(3, 4)
    x, t = pylucid.tensor(a), torch.tensor(a)
    assert x.repeat(2, 1).tolist() == t.repeat(2, 1).tolist()
    assert pylucid.roll(x, (1, 2), (0, 1)).tolist() == torch.roll(t, (1, 2), (0, 1)).tolist()
    assert pylucid.eye(3, 2).tolist() == torch.eye(3, 2).tolist()
    assert pylucid.full((2,), 3).dtype.name == str(torch.full((2,), 3).dtype).split(".")[1]
    assert pylucid.arange(0, 1, 0.25).tolist() == torch.arange(0, 1, 0.25).tolist()
    assert pylucid.Tensor(2, 3).shape == tuple(torch.Tensor(2, 3).shape)


def test_autograd_inference_mode_alias():
    """torch.autograd.inference_mode is the same context manager as torch.inference_mode."""
    assert pylucid.autograd.inference_mode is pylucid.inference_mode
    with pytest.raises(AttributeError):
        pylucid.autograd.no_such_name  # noqa: B018


def test_bitwise_and_logical_ops_keep_zero_dim():
    """Guards against numpy scalars turning 0-d results into shape (1,) (torch keeps 0-d)."""
    a, b = pylucid.tensor(True), pylucid.tensor(False)
    for r in (a & b, a | b, a ^ b, ~pylucid.tensor(3), pylucid.logical_or(a, b), pylucid.logical_and(a, b),
              pylucid.logical_xor(a, b), pylucid.isclose(pylucid.tensor(1.0), pylucid.tensor(1.0))):
        assert r.shape == ()
    assert (a | b).item() is True and pylucid.logical_and(a, b).item() is False


def test_sub_inplace_alpha_and_rsub_zero_sign():
    """Guards against x.sub_(y, alpha=...) raising TypeError (PyTorch's sub_ takes alpha, and
    foreach/EMA code passes it), and rsub(x, y, alpha) giving -0.0 where y - alpha * x is +0.0."""
    x = pylucid.tensor([1.0, 2.0, 3.0])
    y = x.clone()
    assert y.sub_(pylucid.tensor([2.0, 2.0, 2.0]), alpha=0.5) is y and y.tolist() == [0.0, 1.0, 2.0]
    assert x.clone().sub_(1, alpha=2).tolist() == [-1.0, 0.0, 1.0]
    w = pylucid.ones(3, requires_grad=True)
    z = w * 3
    z.sub_(w, alpha=2)
    z.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    r = pylucid.rsub(pylucid.tensor([1.0]), pylucid.tensor([2.0]), alpha=2)
    assert r.item() == 0.0 and str(r.item()) == "0.0"
    assert pylucid.rsub(x, 10.0).tolist() == [9.0, 8.0, 7.0]


def test_environment_report_names():
    """Guards against environment-report scripts (`torch.version.cuda`, `backends.openmp`) stopping
    on a missing name."""
    assert pylucid.version.cuda is None and pylucid.version.__version__ == pylucid.__version__
    assert pylucid.backends.openmp.is_available() is True
    assert pylucid.backends.mkl.is_available() is False and pylucid.backends.mkldnn.is_available() is False


def test_real_imag_to_dense_put_():
    """Guards against Tensor.real/imag/to_dense/put_ missing or differing from PyTorch's."""
    x = pylucid.ones(2)
    assert x.real is x and x.to_dense() is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    y = pylucid.zeros(2, 3)
    y.put_(pylucid.tensor([0, -1]), pylucid.tensor([1.0, 2.0]))
    assert y.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    y.put_(pylucid.tensor([0, 0]), pylucid.tensor([1.0, 2.0]), accumulate=True)
    assert y[0, 0].item() == 4.0
    t = pylucid.zeros(3, 2).T  # not contiguous: written through
    t.put_(pylucid.tensor([1, 5]), pylucid.tensor([3.0, 4.0]))
    assert t.tolist() == [[0.0, 3.0, 0.0], [0.0, 0.0, 4.0]]


def test_tensor_with_numpy_array_operands_as_torch():
    """Guards against ``t * ndarray`` returning a numpy array and ``t == ndarray`` returning the
    Python bool False: as in PyTorch, numpy computes with the tensor's values and the result comes
    back as a tensor (float64 from a float64 array), ``==`` compares elementwise, numpy ufuncs
    (np.exp(t)) return tensors, and a tensor that requires grad raises instead of silently
    losing its gradient."""
    t = pylucid.tensor([1.0, 2.0])
    a = np.array([2.0, 3.0])
    r = t * a
    assert isinstance(r, pylucid.Tensor) and r.dtype == pylucid.float64 and r.tolist() == [2.0, 6.0]
    assert isinstance(t - a, pylucid.Tensor) and (pylucid.ones(2, 2) - np.eye(2)).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    eq = t == np.array([1.0, 3.0])
    assert isinstance(eq, pylucid.Tensor) and eq.tolist() == [True, False] and (t != a).tolist() == [True, True]
    assert isinstance(np.exp(t), pylucid.Tensor) and np.argmax(t).shape == () and np.maximum(t, 1.5).tolist() == [1.5, 2.0]
    assert (t * a.astype(np.float32)).dtype == pylucid.float32
    with pytest.raises(RuntimeError, match="requires grad"):
        pylucid.ones(2, requires_grad=True) * a
    with pylucid.no_grad():
        assert isinstance(pylucid.ones(2, requires_grad=True) * a, pylucid.Tensor)


def test_eye_of_a_tall_shape_has_ones_on_the_diagonal_only():
    """Guards against eye(n, m) with n > m + 1 writing a stray one below the diagonal (the flat
    stride m + 1 runs past the m-th row of a tall matrix)."""
    for n, m in ((5, 3), (7, 2), (4, 1), (3, 5), (6, 6), (0, 3)):
        np.testing.assert_array_equal(pylucid.eye(n, m).numpy(), np.eye(n, m, dtype=np.float32))
