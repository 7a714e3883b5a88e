"""The PyTorch names added for toy programs and tutorials (python/pylucid/_compat_names.py and
the matching nn, optim, utils and profiler files): each compared with torch where installed,
differentiable ones gradchecked in float64, and their error cases pinned."""
import subprocess
import sys
import warnings

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from pylucid import nn
from pylucid.autograd import gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, tol=1e-6):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _f64(*shape, seed=0):
    return pylucid.tensor(np.random.RandomState(seed).randn(*shape), dtype=pylucid.float64, requires_grad=True)


# ---- indices, sizes, scatter functions --------------------------------------------------------

def test_unravel_index_wraps_like_torch():
    """Guards against out-of-range and negative flat indices being refused or mapped differently
    (PyTorch takes floor quotients modulo each size)."""
    idx = pylucid.tensor([0, 4, 5, -1, 6, 13])
    got = pylucid.unravel_index(idx, (2, 3))
    flat = np.array([0, 4, 5, -1, 6, 13])
    assert [g.tolist() for g in got] == [list((flat // 3) % 2), list(flat % 3)]
    if torch is not None:
        ref = torch.unravel_index(torch.tensor(flat), (2, 3))
        assert [g.tolist() for g in got] == [r.tolist() for r in ref]
    assert pylucid.unravel_index(pylucid.tensor(5), ()) == ()
    with pytest.raises(TypeError, match="integer dtype"):
        pylucid.unravel_index(pylucid.tensor([1.0]), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        pylucid.unravel_index(pylucid.tensor(1), (2, -3))


def test_scalar_tensor_is_sign_and_size_predicates():
    """Guards against scalar_tensor keeping an int dtype and is_signed/is_same_size answering wrongly."""
    s = pylucid.scalar_tensor(3)
    assert s.dtype == pylucid.float32 and s.shape == () and s.item() == 3.0
    assert pylucid.scalar_tensor(2, dtype=pylucid.float64).dtype == pylucid.float64
    assert pylucid.is_same_size(pylucid.ones(2, 3), pylucid.zeros(2, 3))
    assert not pylucid.is_same_size(pylucid.ones(2), pylucid.ones(2, 1))
    assert pylucid.is_signed(pylucid.ones(2)) and pylucid.ones(2, dtype=pylucid.int64).is_signed()
    assert not pylucid.ones(2, dtype=pylucid.bool).is_signed()


def test_split_with_sizes():
    """Guards against sizes that do not add up being accepted (PyTorch raises)."""
    a, b = pylucid.arange(5.0).split_with_sizes([2, 3])
    assert a.tolist() == [0.0, 1.0] and b.tolist() == [2.0, 3.0, 4.0]
    parts = pylucid.split_with_sizes(pylucid.arange(12.0).reshape(3, 4), [1, 3], dim=1)
    assert [tuple(p.shape) for p in parts] == [(3, 1), (3, 3)]
    with pytest.raises(RuntimeError, match="sum exactly to 5"):
        pylucid.ones(5).split_with_sizes([2, 2])


@needs_torch
@pytest.mark.parametrize("name,args,src_shape", [
    ("select_scatter", (0, 1), (4,)), ("select_scatter", (1, -1), (3,)),
    ("slice_scatter", (1, 0, 4, 2), (3, 2)), ("slice_scatter", (0, 1, None, 1), (2, 4)),
    ("diagonal_scatter", (0,), (3,)), ("diagonal_scatter", (1,), (3,)), ("diagonal_scatter", (-1, 0, 1), (2,)),
])
def test_scatter_functions_match_torch_and_gradcheck(name, args, src_shape):
    """Guards against the *_scatter functions writing the wrong view, or their gradients not
    splitting between input (zero at the view) and src (the view)."""
    x = np.random.RandomState(1).randn(3, 4)
    src = np.random.RandomState(2).randn(*src_shape)
    got = getattr(pylucid, name)(pylucid.tensor(x), pylucid.tensor(src), *args)
    ref = getattr(torch, name)(torch.tensor(x), torch.tensor(src), *args)
    _close(got, ref)
    assert gradcheck(lambda a, s: getattr(pylucid, name)(a, s, *args), (_f64(3, 4), _f64(*src_shape, seed=3)))
    assert getattr(pylucid.tensor(x), name)(pylucid.tensor(src), *args).tolist() == got.tolist()


def test_scatter_functions_refuse_wrong_src_shape_and_index():
    """Guards against a src that does not fit the slice being broadcast silently."""
    with pytest.raises(RuntimeError, match="slice size = \\[3\\]"):
        pylucid.select_scatter(pylucid.zeros(2, 3), pylucid.ones(2), 0, 0)
    with pytest.raises(IndexError):
        pylucid.select_scatter(pylucid.zeros(2, 3), pylucid.ones(3), 0, 5)
    with pytest.raises(RuntimeError, match="src size"):
        pylucid.diagonal_scatter(pylucid.zeros(3, 3), pylucid.ones(3), 1)


# ---- copysign, ldexp, frexp -------------------------------------------------------------------

@needs_torch
def test_copysign_ldexp_frexp_match_torch():
    """Guards against -0.0 losing its sign bit in copysign, integer inputs staying integral, and
    frexp's mantissa range or special values differing from PyTorch's."""
    a = np.array([1.0, -2.0, 0.0, -0.0, 3.5, float("inf")])
    b = np.array([-0.0, 1.0, -1.0, 2.0, float("-inf"), -3.0])
    _close(pylucid.copysign(pylucid.tensor(a), pylucid.tensor(b)), torch.copysign(torch.tensor(a), torch.tensor(b)))
    assert np.array_equal(np.signbit(_np(pylucid.copysign(pylucid.tensor(a), pylucid.tensor(b)))),
                          np.signbit(torch.copysign(torch.tensor(a), torch.tensor(b)).numpy()))
    got = pylucid.copysign(pylucid.tensor([1, 2]), -1)
    assert got.dtype == pylucid.float32 and got.tolist() == [-1.0, -2.0]
    got = pylucid.ldexp(pylucid.tensor([1, 2]), pylucid.tensor([3, -1]))
    assert got.dtype == pylucid.float32 and got.tolist() == [8.0, 1.0]
    x = np.array([0.0, 8.0, -3.5, 1e-30, 7e20, float("inf"), float("nan")], dtype=np.float32)
    m, e = pylucid.frexp(pylucid.tensor(x))
    rm, re_ = torch.frexp(torch.tensor(x))
    _close(m, rm)
    assert e.tolist() == re_.tolist()
    assert pylucid.frexp(pylucid.tensor(x)).mantissa is not None


def test_copysign_ldexp_frexp_gradients_and_errors():
    """Guards against copysign sending a gradient to `other`, and frexp accepting integers."""
    a, o = _f64(2, 3), _f64(2, 3, seed=1)
    assert gradcheck(lambda a, o: pylucid.copysign(a, o), (a, o))
    out = pylucid.copysign(a, o)
    out.sum().backward()
    assert o.grad is None or float(o.grad.abs().sum()) == 0.0
    assert gradcheck(lambda a: pylucid.ldexp(a, pylucid.tensor([1.0, -2.0, 3.0], dtype=pylucid.float64)), (_f64(2, 3),))
    assert gradcheck(lambda a: pylucid.frexp(a).mantissa, (_f64(2, 3),))
    with pytest.raises(RuntimeError, match="floating-point"):
        pylucid.frexp(pylucid.tensor([1, 2]))


def test_inplace_methods():
    """Guards against the in-place forms (copysign_, ldexp_, xlogy_, float_power_, nan_to_num_)
    returning a new tensor, or casting a float result into an integer tensor silently."""
    x = pylucid.tensor([1.0, -2.0])
    assert x.copysign_(-1) is x and x.tolist() == [-1.0, -2.0]
    y = pylucid.tensor([1.0, 2.0])
    y.xlogy_(2.0)
    _close(y, np.log(2.0) * np.array([1.0, 2.0]))
    z = pylucid.tensor([2.0, 3.0], dtype=pylucid.float64)
    z.float_power_(2)
    assert z.tolist() == [4.0, 9.0]
    with pytest.raises(TypeError, match="float_power_"):
        pylucid.ones(2).float_power_(2)
    with pytest.raises(TypeError, match="can't be cast"):
        pylucid.tensor([1, 2]).xlogy_(2.0)
    w = pylucid.tensor([1.0, 3.0])
    w.ldexp_(pylucid.tensor([1.0, 2.0]))
    assert w.tolist() == [2.0, 12.0]
    n = pylucid.tensor([float("nan"), 1.0])
    assert pylucid.nan_to_num_(n, nan=5.0) is n and n.tolist() == [5.0, 1.0]
    leaf = pylucid.ones(2, requires_grad=True)
    h = leaf * 1
    h.copysign_(-1.0)
    h.sum().backward()
    assert leaf.grad.tolist() == [-1.0, -1.0]


# ---- windows ----------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name,extra", [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5, 0.4)),
                                        ("bartlett_window", ()), ("blackman_window", ()), ("kaiser_window", ()),
                                        ("kaiser_window", (3.0,))])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name, extra, n, periodic):
    """Guards against the periodic/symmetric conventions or the window formulas drifting."""
    for dt, tdt in ((pylucid.float32, torch.float32), (pylucid.float64, torch.float64)):
        got = getattr(pylucid, name)(n, periodic, *extra, dtype=dt)
        ref = getattr(torch, name)(n, periodic, *extra, dtype=tdt)
        assert got.dtype == dt
        _close(got, ref, 1e-6 if dt == pylucid.float32 else 1e-12)


def test_window_errors():
    """Guards against negative lengths and integer dtypes being accepted."""
    with pytest.raises(RuntimeError, match="non-negative window_length"):
        pylucid.hann_window(-1)
    with pytest.raises(TypeError, match="floating point"):
        pylucid.hann_window(3, dtype=pylucid.int64)
    assert pylucid.hann_window(4, requires_grad=True).requires_grad


# ---- process-wide settings ----------------------------------------------------------------------

def test_set_default_tensor_type_warns_and_sets_the_dtype():
    """Guards against the deprecated call being silent, or integer types becoming the default."""
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            pylucid.set_default_tensor_type(pylucid.DoubleTensor)
        assert pylucid.ones(1).dtype == pylucid.float64
        with pytest.warns(UserWarning):
            pylucid.set_default_tensor_type("torch.FloatTensor")
        assert pylucid.ones(1).dtype == pylucid.float32
        with pytest.raises(TypeError, match="floating-point"), pytest.warns(UserWarning):
            pylucid.set_default_tensor_type(pylucid.LongTensor)
        with pytest.raises(TypeError), pytest.warns(UserWarning):
            pylucid.set_default_tensor_type(pylucid.float64)
    finally:
        pylucid.set_default_dtype(pylucid.float32)


def test_interop_threads_can_be_set_once():
    """Guards against a second set_num_interop_threads succeeding (PyTorch refuses it)."""
    code = ("import pylucid\n"
            "assert pylucid.get_num_interop_threads() >= 1\n"
            "try:\n    pylucid.set_num_interop_threads(0)\nexcept RuntimeError as e:\n    print('zero', e)\n"
            "pylucid.set_num_interop_threads(3)\nprint(pylucid.get_num_interop_threads())\n"
            "try:\n    pylucid.set_num_interop_threads(2)\nexcept RuntimeError as e:\n    print('again', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "zero set_num_interop_threads expects a positive integer" in out
    assert "\n3\n" in out and "again Error: cannot set number of interop threads" in out


def test_autocast_state_functions():
    """Guards against the functional autocast switches not reaching the state `autocast` uses,
    and CPU autocast's default dtype differing from PyTorch's bfloat16."""
    assert pylucid.get_autocast_dtype("cpu") == pylucid.bfloat16
    assert not pylucid.is_autocast_enabled("cpu") and not pylucid.is_autocast_enabled()
    a = pylucid.ones(2, 2)
    try:
        pylucid.set_autocast_dtype("cpu", pylucid.float16)
        pylucid.set_autocast_enabled("cpu", True)
        assert pylucid.is_autocast_enabled("cpu") and (a @ a).dtype == pylucid.float16
        with pylucid.autocast("cpu"):
            assert (a @ a).dtype == pylucid.float16
    finally:
        pylucid.set_autocast_enabled("cpu", False)
        pylucid.set_autocast_dtype("cpu", pylucid.bfloat16)
    assert (a @ a).dtype == pylucid.float32
    with pylucid.autocast("cpu"):
        assert pylucid.is_autocast_enabled("cpu") and pylucid.get_autocast_dtype("cpu") == pylucid.bfloat16
    with pytest.warns(FutureWarning):
        assert pylucid.get_autocast_cpu_dtype() == pylucid.bfloat16
    with pytest.warns(FutureWarning):
        assert pylucid.get_autocast_gpu_dtype() == pylucid.float16
    with pytest.raises(RuntimeError, match="device_type"):
        pylucid.get_autocast_dtype("tpu")


# ---- nn -------------------------------------------------------------------------------------------

@needs_torch
def test_rrelu_draws_torch_slopes():
    """Guards against the training slopes not following PyTorch's generator stream (one float64
    uniform per non-positive element) and the eval slope not being the mean."""
    x = np.random.RandomState(0).randn(4, 6).astype(np.float32)
    x[0, 0] = 0.0
    pylucid.manual_seed(3)
    torch.manual_seed(3)
    _close(nn.RReLU()(pylucid.tensor(x)), torch.nn.RReLU()(torch.tensor(x)))
    _close(nn.RReLU(0.1, 0.4).eval()(pylucid.tensor(x)), torch.nn.RReLU(0.1, 0.4).eval()(torch.tensor(x)))
    g1, g2 = pylucid.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    _close(pylucid.rrelu(pylucid.tensor(x), 0.2, 0.5, True, generator=g1),
           torch.rrelu(torch.tensor(x), 0.2, 0.5, True, generator=g2))
    _close(F.rrelu(pylucid.tensor(x)), torch.nn.functional.rrelu(torch.tensor(x)))
    assert repr(nn.RReLU()) == repr(torch.nn.RReLU()).replace("torch.", "")


def test_rrelu_gradient_is_the_slope_and_inplace_is_recorded():
    """Guards against the training gradient differing from the slope used in the forward."""
    x = _f64(3, 4)
    assert gradcheck(lambda t: F.rrelu(t, 0.2, 0.2, training=True), (x,))
    assert gradcheck(lambda t: F.rrelu(t, 0.1, 0.3, training=False), (x,))
    pylucid.manual_seed(0)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    slope = _np(y) / _np(x)
    _close(x.grad, slope, 1e-12)
    leaf = pylucid.tensor([-1.0, 2.0], requires_grad=True)
    h = leaf * 1
    F.rrelu_(h, 0.5, 0.5, training=True)
    h.sum().backward()
    assert leaf.grad.tolist() == [0.5, 1.0]
    with pytest.raises(RuntimeError, match="Lower bound"):
        F.rrelu(pylucid.ones(2), 0.5, 0.1)


@needs_torch
def test_dropout3d_matches_torch():
    """Guards against Dropout3d dropping per element instead of per 3-d feature map."""
    x = np.ones((2, 3, 2, 2, 2), np.float32)
    pylucid.manual_seed(0)
    torch.manual_seed(0)
    _close(nn.Dropout3d()(pylucid.tensor(x)), torch.nn.Dropout3d()(torch.tensor(x)))
    _close(F.dropout3d(pylucid.tensor(x[0]), 0.5), torch.nn.functional.dropout3d(torch.tensor(x[0]), 0.5))
    assert nn.Dropout3d().eval()(pylucid.tensor(x)).tolist() == x.tolist()
    with pytest.warns(UserWarning, match="dropout3d"):
        F.dropout3d(pylucid.ones(2, 3, 4), 0.5)


@needs_torch
def test_adaptive_log_softmax_matches_torch():
    """Guards against a different parameter layout (state_dict keys, seeded weights), wrong
    cluster routing of targets, or gradients differing from PyTorch's."""
    pylucid.manual_seed(0)
    torch.manual_seed(0)
    m1 = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], div_value=2.0, head_bias=True)
    m2 = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], div_value=2.0, head_bias=True)
    assert list(m1.state_dict()) == list(m2.state_dict())
    for k, v in m2.state_dict().items():
        _close(m1.state_dict()[k], v)
    inp = np.random.RandomState(1).randn(7, 16).astype(np.float32)
    tgt = np.array([0, 4, 5, 11, 12, 19, 3])
    i1, i2 = pylucid.tensor(inp, requires_grad=True), torch.tensor(inp, requires_grad=True)
    o1, o2 = m1(i1, pylucid.tensor(tgt)), m2(i2, torch.tensor(tgt))
    assert o1._fields == ("output", "loss")
    _close(o1.output, o2.output, 1e-5)
    _close(o1.loss, o2.loss, 1e-5)
    o1.loss.backward()
    o2.loss.backward()
    _close(i1.grad, i2.grad, 1e-5)
    for (_, p1), (_, p2) in zip(m1.named_parameters(), m2.named_parameters()):
        _close(p1.grad, p2.grad, 1e-5)
    _close(m1.log_prob(pylucid.tensor(inp)), m2.log_prob(torch.tensor(inp)), 1e-5)
    assert m1.predict(pylucid.tensor(inp)).tolist() == m2.predict(torch.tensor(inp)).tolist()
    _close(m1(pylucid.tensor(inp[0]), pylucid.tensor(13)).output, m2(torch.tensor(inp[0]), torch.tensor(13)).output, 1e-5)
    assert repr(m1) == repr(m2)


def test_adaptive_log_softmax_gradcheck_and_errors():
    """Guards against the loss not being differentiable through both head and tail, and bad
    cutoffs or targets being accepted."""
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=2.0).double()
    tgt = pylucid.tensor([0, 3, 5, 1])
    assert gradcheck(lambda x: m(x, tgt).loss, (_f64(4, 4),))
    lp = m.log_prob(_f64(3, 4))
    _close(lp.exp().sum(1), np.ones(3), 1e-12)
    with pytest.raises(ValueError, match="cutoffs"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 6, [4, 2])
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 6, [])
    with pytest.raises(IndexError, match="Target values should be in"):
        m(_f64(2, 4), pylucid.tensor([0, 6]))
    with pytest.raises(RuntimeError, match="same size in the batch"):
        m(_f64(2, 4), pylucid.tensor([0, 1, 2]))


# ---- optim ----------------------------------------------------------------------------------------

def _train(M, name, kw, steps=6):
    rs = np.random.RandomState(0)
    shapes = ((4, 3), (3,), (2, 3, 2))
    init = [rs.randn(*s).astype(np.float32) for s in shapes]
    data = [rs.randn(*s).astype(np.float32) for s in shapes]
    ps = [M.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(M.optim, name)(ps, **kw)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((p - M.tensor(d)) ** 2 * (p.abs() + 1)).sum() for p, d in zip(ps, data))
        loss.backward()
        opt.step()
    return ps, opt


@needs_torch
@pytest.mark.parametrize("name,kw", [
    ("ASGD", {}), ("ASGD", {"lr": 0.05, "t0": 2, "weight_decay": 0.1, "lambd": 0.01}), ("ASGD", {"maximize": True}),
    ("Adafactor", {}), ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "d": 1.5, "beta2_decay": -0.5}),
    ("Adafactor", {"eps": (1e-20, 1e-2), "maximize": True}),
])
def test_optimizers_match_torch(name, kw):
    """Guards against ASGD's averaging/eta schedule or Adafactor's factored second moment and
    relative step drifting from PyTorch's, and their state keys differing."""
    p1, o1 = _train(pylucid, name, kw)
    p2, o2 = _train(torch, name, kw)
    for a, b in zip(p1, p2):
        _close(a, b, 1e-5)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert sorted(s1["param_groups"][0]) == sorted(s2["param_groups"][0])
    for k, st in s2["state"].items():
        assert sorted(s1["state"][k]) == sorted(st)
        for kk, v in st.items():
            _close(s1["state"][k][kk], v, 1e-5)


def test_optimizer_errors():
    """Guards against invalid hyperparameters being accepted and SparseAdam stepping on a dense gradient."""
    p = pylucid.ones(2, requires_grad=True)
    for ctor in (lambda: pylucid.optim.ASGD([p], lr=-1), lambda: pylucid.optim.Adafactor([p], beta2_decay=0.5),
                 lambda: pylucid.optim.Adafactor([p], d=0.5), lambda: pylucid.optim.SparseAdam([p], lr=0),
                 lambda: pylucid.optim.SparseAdam([p], betas=(1.0, 0.9))):
        with pytest.raises(ValueError):
            ctor()
    opt = pylucid.optim.SparseAdam([p])
    opt.step()  # no gradient yet: nothing to do
    (p * 2).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()


# ---- nn.utils and nn.init ---------------------------------------------------------------------

def test_clip_grad_norm_alias_and_init_aliases_warn():
    """Guards against the deprecated spellings being missing or silent."""
    p = pylucid.ones(3, requires_grad=True)
    (p * 5).sum().backward()
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = nn.utils.clip_grad_norm([p], 1.0)
    assert abs(total.item() - 75 ** 0.5) < 1e-5 and abs(float(p.grad.norm()) - 1.0) < 1e-5
    for old in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        t = pylucid.empty(3, 4, 3) if old == "dirac" else pylucid.empty(4, 4)
        args = {"constant": (0.5,), "sparse": (0.5,)}.get(old, ())
        with pytest.warns(FutureWarning, match=f"nn.init.{old}_"):
            getattr(nn.init, old)(t, *args)


@needs_torch
def test_init_alias_draws_match_torch():
    """Guards against the alias drawing differently from the underscore form."""
    a, b = pylucid.empty(3, 5), torch.empty(3, 5)
    pylucid.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.init.kaiming_normal(a)
        torch.nn.init.kaiming_normal(b)
    _close(a, b)


@needs_torch
def test_skip_init_leaves_the_generator_where_torch_does():
    """Guards against skip_init consuming random numbers (PyTorch's draws none)."""
    pylucid.manual_seed(0)
    torch.manual_seed(0)
    m = nn.utils.skip_init(nn.Linear, 5, 2)
    torch.nn.utils.skip_init(torch.nn.Linear, 5, 2)
    assert tuple(m.weight.shape) == (2, 5)
    _close(pylucid.randn(4), torch.randn(4))
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)


def test_fusion_equals_layer_then_batchnorm():
    """Guards against the folded weights or bias being wrong (per output channel, transposed
    convolutions on weight dim 1)."""
    pylucid.manual_seed(0)
    for conv, bn, transpose in ((nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), False),
                                (nn.ConvTranspose2d(2, 3, 3), nn.BatchNorm2d(3), True),
                                (nn.Conv1d(2, 4, 3, bias=False), nn.BatchNorm1d(4), False)):
        x = pylucid.randn(4, 2, 6, 6) if conv.weight.dim() == 4 else pylucid.randn(4, 2, 7)
        bn(conv(x))  # running statistics
        conv.eval()
        bn.eval()
        fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        _close(fused(x), bn(conv(x)), 1e-5)
        assert isinstance(fused.weight, nn.Parameter) and fused is not conv
    lin, bn1 = nn.Linear(4, 3), nn.BatchNorm1d(3)
    bn1(lin(pylucid.randn(8, 4)))
    lin.eval()
    bn1.eval()
    x = pylucid.randn(2, 4)
    _close(nn.utils.fuse_linear_bn_eval(lin, bn1)(x), bn1(lin(x)), 1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_linear_bn_eval(lin.train(), bn1)
    with pytest.raises(AssertionError, match="out_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(4, 2).eval(), bn1)


# ---- autograd.graph ---------------------------------------------------------------------------

class _Square(pylucid.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_saved_tensors_hooks_pack_and_unpack_custom_function_tensors():
    """Guards against the hooks being ignored, or unpack not supplying what backward reads."""
    from pylucid.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

    log = []

    def pack(t):
        log.append("pack")
        return t.detach().numpy().copy()

    def unpack(a):
        log.append("unpack")
        return pylucid.tensor(a)

    x = pylucid.tensor([3.0, -1.0], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = _Square.apply(x)
    x.data.mul_(10)  # the packed copy is what backward sees, so no version error either
    y.sum().backward()
    assert log == ["pack", "unpack"] and x.grad.tolist() == [6.0, -2.0]
    with save_on_cpu():
        z = _Square.apply(pylucid.tensor([2.0], requires_grad=True))
    assert z.grad_fn is not None
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        bad = _Square.apply(pylucid.tensor([1.0], requires_grad=True))
    with pytest.raises(TypeError, match="unpack_hook should return a Tensor"):
        bad.sum().backward()
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(pack, unpack):
                pass


def test_post_accumulate_grad_hook_runs_after_accumulation():
    """Guards against the hook seeing the gradient before it is accumulated, running for
    autograd.grad (which accumulates nothing), or surviving remove()."""
    w = pylucid.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]
    pylucid.autograd.grad((w * 2).sum(), [w])
    assert len(seen) == 2
    pylucid.autograd.backward([(w * 1).sum()], inputs=[w])
    assert seen[-1] == [7.0, 7.0]
    h.remove()
    (w * 3).sum().backward()
    assert len(seen) == 3
    # the optimizer-in-backward pattern
    p = pylucid.tensor([1.0], requires_grad=True)
    opt = pylucid.optim.SGD([p], lr=0.5)

    def step(param):
        opt.step()
        opt.zero_grad()
    p.register_post_accumulate_grad_hook(step)
    (p * p).sum().backward()
    assert p.tolist() == [0.0] and p.grad is None
    with pytest.raises(RuntimeError, match="non-leaf"):
        (p * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        pylucid.ones(1).register_post_accumulate_grad_hook(print)


# ---- DataLoader workers -----------------------------------------------------------------------

class _Aug(pylucid.utils.data.Dataset):
    def __len__(self):
        return 9

    def __getitem__(self, i):
        import random
        wi = pylucid.utils.data.get_worker_info()
        return pylucid.tensor([float(i), pylucid.rand(()).item(), random.random(), float(np.random.rand()),
                               -1.0 if wi is None else float(wi.id)])


class _Stream(pylucid.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        wi = pylucid.utils.data.get_worker_info()
        if wi is None:
            return iter(range(self.n))
        return iter(range(wi.id, self.n, wi.num_workers))


def test_dataloader_workers_run_in_process_with_worker_seeds():
    """Guards against num_workers > 0 raising, batches not being assigned round-robin to the
    workers, workers sharing the main generator, and get_worker_info() answering None in a worker."""
    DataLoader = pylucid.utils.data.DataLoader
    pylucid.manual_seed(0)
    before = pylucid.get_rng_state()
    batches = list(DataLoader(_Aug(), batch_size=2, num_workers=2))
    ids = [b[:, 4].tolist() for b in batches]
    assert ids == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0]]
    # worker k's draws are its own stream, seeded base_seed + k; the main generator only gave the base seed
    pylucid.set_rng_state(before)
    base = int(pylucid.empty((), dtype=pylucid.int64).random_().item())
    after_main = pylucid.rand(2)
    g = pylucid.Generator().manual_seed(base + 1)
    assert abs(batches[1][0, 1].item() - pylucid.rand((), generator=g).item()) < 1e-7
    pylucid.set_rng_state(before)
    list(DataLoader(_Aug(), batch_size=2, num_workers=2))
    _close(pylucid.rand(2), after_main)
    assert pylucid.utils.data.get_worker_info() is None
    stream = [b.tolist() for b in DataLoader(_Stream(7), batch_size=2, num_workers=3)]
    assert stream == [[0, 3], [1, 4], [2, 5], [6]]
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(_Aug(), persistent_workers=True)


@needs_torch
def test_dataloader_workers_match_torch_batches():
    """Guards against the simulated workers giving other batches or random numbers than
    PyTorch's worker processes for the same seed."""
    code = r'''
import random, sys
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

class Aug(Dataset):
    def __len__(self): return 7
    def __getitem__(self, i):
        return torch.tensor([float(i), torch.rand(()).item(), random.random(), float(np.random.rand())])

class Uneven(IterableDataset):
    def __iter__(self):
        wi = get_worker_info()
        return iter([torch.randn(()).item() for _ in range(2 + wi.id)])

torch.manual_seed(0); random.seed(0); np.random.seed(0)
for epoch in range(2):
    for b in DataLoader(Aug(), batch_size=3, shuffle=True, num_workers=2):
        print([round(v, 5) for v in b.flatten().tolist()])
print([[round(x, 5) for x in b.tolist()] for b in DataLoader(Uneven(), batch_size=2, num_workers=3)])
print(torch.rand(2).tolist(), random.random(), np.random.rand())
'''
    import os
    env = dict(os.environ)
    ours = subprocess.run([sys.executable, "-c", "import pylucid.as_torch as a; a.install(); exec(open(0).read())"],
                          input=code, capture_output=True, text=True, env=env, check=True).stdout
    theirs = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert ours == theirs


# ---- profiler ---------------------------------------------------------------------------------------

def test_profiler_times_calls_and_ranges():
    """Guards against the profiler reporting made-up numbers: every entry is a measured call,
    children nest inside their parent's time, and the wrappers are removed on exit."""
    from pylucid.profiler import ProfilerActivity, profile, record_function, schedule

    x = pylucid.randn(64, 64)
    original = pylucid.Tensor.__matmul__
    with profile(activities=[ProfilerActivity.CPU]) as prof, record_function("block"):
        for _ in range(3):
            y = (x @ x).relu().sum()
    assert pylucid.Tensor.__matmul__ is original
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["__matmul__"].count == 3 and avg["block"].count == 1 and avg["relu"].count == 3
    block = avg["block"]
    assert block.cpu_time_total >= avg["__matmul__"].cpu_time_total + avg["relu"].cpu_time_total
    assert all(e.self_cpu_time_total >= 0 for e in prof.events())
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "Name" in table and "Self CPU %" in table and "# of Calls" in table and "block" in table
    assert table.splitlines()[3].split()[0] == "block"  # the outermost range has the largest total
    assert y.item() >= 0
    with pytest.raises(RuntimeError, match="sort_by"):
        prof.key_averages().table(sort_by="bogus")
    saved = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: saved.append([e.key for e in p.events()])) as p:
        for _ in range(6):
            pylucid.ones(2)
            p.step()
    assert saved == [["ones", "lucid::full", "ones", "lucid::full"]] or saved == [["ones", "ones"]]

    @record_function("decorated")
    def f():
        return pylucid.zeros(1)
    with profile() as prof2:
        f()
    assert "decorated" in [e.key for e in prof2.key_averages()]


# ---- gaps the tutorial programs found ---------------------------------------------------------

def test_range_indexes_like_a_list():
    """Guards against x[range(n), target] (the nn tutorial's nll) being refused."""
    x = pylucid.arange(12.0).reshape(3, 4)
    t = pylucid.tensor([1, 0, 3])
    assert x[range(3), t].tolist() == [1.0, 4.0, 11.0]
    assert x[range(1, 3)].tolist() == x[[1, 2]].tolist()
    y = pylucid.zeros(3, 4)
    y[range(3), t] = 1.0
    assert y.sum().item() == 3.0


def test_steplr_takes_a_float_step_size():
    """Guards against StepLR(optimizer, 1.0, gamma=0.95), as the transformer tutorial writes it,
    being refused."""
    opt = pylucid.optim.SGD([pylucid.ones(1, requires_grad=True)], lr=1.0)
    sched = pylucid.optim.lr_scheduler.StepLR(opt, 1.0, gamma=0.5)
    opt.step()
    sched.step()
    sched.step()
    assert sched.get_last_lr() == [0.25]
    with pytest.raises(RuntimeError, match="step_size"):
        pylucid.optim.lr_scheduler.StepLR(opt, 0)


# ---- the smaller names the scan against torch's namespaces found ------------------------------

def test_constants_and_real_tensor_helpers():
    """Guards against torch.pi-style constants missing and the complex helpers misbehaving on real tensors."""
    import math
    assert pylucid.pi == math.pi and pylucid.e == math.e and pylucid.inf == math.inf
    assert math.isnan(pylucid.nan)
    x = pylucid.tensor([1.0, -2.0, 0.0])
    assert pylucid.conj(x) is x and x.conj() is x and pylucid.resolve_conj(x) is x and pylucid.real(x) is x
    assert not x.is_conj() and not x.is_neg() and x.isreal().all()
    assert pylucid.conj_physical(x) is not x and pylucid.conj_physical(x).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="non-complex"):
        pylucid.imag(x)
    assert x.get_device() == -1 and pylucid.typename(x) == "torch.FloatTensor"
    assert not (x.is_sparse or x.is_quantized or x.is_meta or x.is_nested or x.is_inference() or x.is_pinned())
    with pytest.raises(RuntimeError, match="accelerator"):
        x.pin_memory()
    assert pylucid.frombuffer(bytearray(np.array([1.5, 2.0], np.float32).tobytes()), dtype=pylucid.float32).tolist() \
        == [1.5, 2.0]
    assert [t.tolist() for t in pylucid.unsafe_split(pylucid.arange(4), 2)] == [[0, 1], [2, 3]]
    assert pylucid.empty_permuted((2, 3), (1, 0)).shape == (2, 3)


@needs_torch
def test_heaviside_and_new_inplace_forms_match_torch():
    """Guards against the in-place methods and torch.<op>_ functions computing something else than the op."""
    x = np.array([-1.5, 0.0, 2.0, 0.0], np.float32)
    v = np.array([0.5, 0.25, 0.5, 0.75], np.float32)
    _close(pylucid.heaviside(pylucid.tensor(x), pylucid.tensor(v)), torch.heaviside(torch.tensor(x), torch.tensor(v)))
    for name, args in (("sigmoid_", ()), ("clip_", (0.0, 1.0)), ("exp_", ()), ("square_", ()), ("zero_", ())):
        a, b = pylucid.tensor(x), torch.tensor(x)
        assert getattr(pylucid, name)(a, *args) is a
        getattr(torch, name)(b, *args)
        _close(a, b)
    for name, args in (("i0_", ()), ("sinc_", ()), ("lgamma_", ()), ("digamma_", ()), ("polygamma_", (1,))):
        a, b = pylucid.tensor(x + 3), torch.tensor(x + 3)
        getattr(a, name)(*args)
        getattr(b, name)(*args)
        _close(a, b, 1e-5)
    a, b = pylucid.tensor([6, 4]), torch.tensor([6, 4])
    a.gcd_(pylucid.tensor([4, 6]))
    b.gcd_(torch.tensor([4, 6]))
    assert a.tolist() == b.tolist()
    m = pylucid.zeros(2)
    m.addmv_(pylucid.ones(2, 3), pylucid.ones(3))
    assert m.tolist() == [3.0, 3.0]


@needs_torch
def test_distributed_sampler_matches_torch():
    """Guards against the per-replica shard, padding or epoch shuffle differing from PyTorch's."""
    for kw in ({"shuffle": True, "seed": 0}, {"shuffle": False}, {"shuffle": False, "drop_last": True},
               {"shuffle": True, "seed": 3, "drop_last": True}):
        for rank in range(3):
            a = pylucid.utils.data.DistributedSampler(range(10), num_replicas=3, rank=rank, **kw)
            b = torch.utils.data.DistributedSampler(range(10), num_replicas=3, rank=rank, **kw)
            for epoch in range(2):
                a.set_epoch(epoch)
                b.set_epoch(epoch)
                assert list(a) == list(b) and len(a) == len(b)
    with pytest.raises(ValueError, match="process group"):
        pylucid.utils.data.DistributedSampler(range(4))
    with pytest.raises(ValueError, match="Invalid rank"):
        pylucid.utils.data.DistributedSampler(range(4), num_replicas=2, rank=2)


@needs_torch
def test_linalg_tensor_functions_match_torch_and_gradcheck():
    """Guards against tensorinv/tensorsolve reshaping in the wrong order."""
    A = np.random.RandomState(0).randn(4, 2, 2)
    _close(pylucid.linalg.tensorinv(pylucid.tensor(A), ind=1), torch.linalg.tensorinv(torch.tensor(A), ind=1), 1e-10)
    A2, B = np.random.RandomState(1).randn(2, 3, 6), np.random.RandomState(2).randn(2, 3)
    _close(pylucid.linalg.tensorsolve(pylucid.tensor(A2), pylucid.tensor(B)),
           torch.linalg.tensorsolve(torch.tensor(A2), torch.tensor(B)), 1e-10)
    A3 = np.random.RandomState(3).randn(6, 2, 3)
    _close(pylucid.linalg.tensorsolve(pylucid.tensor(A3), pylucid.tensor(B), dims=(0,)),
           torch.linalg.tensorsolve(torch.tensor(A3), torch.tensor(B), dims=(0,)), 1e-10)
    x = np.array([1.0, 2.0, 3.0])
    _close(pylucid.linalg.vander(pylucid.tensor(x), N=4), torch.linalg.vander(torch.tensor(x), N=4))
    assert gradcheck(lambda a: pylucid.linalg.tensorinv(a, ind=1), (pylucid.tensor(A, requires_grad=True),))
    res, info = pylucid.linalg.solve_ex(pylucid.eye(2), pylucid.ones(2))
    assert res.tolist() == [1.0, 1.0] and info.item() == 0
    with pytest.raises(RuntimeError, match="greater than 1"):
        pylucid.linalg.vander(pylucid.tensor(x), N=1)


@needs_torch
def test_pad3d_modules_match_torch():
    """Guards against the 3-d padding layers padding the wrong dims."""
    x = np.arange(16.0, dtype=np.float32).reshape(1, 2, 2, 2, 2)
    for name, args in (("ReflectionPad3d", (1,)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)),
                       ("CircularPad3d", (1,)), ("ZeroPad3d", (1,)), ("ConstantPad3d", ((1, 0, 0, 1, 1, 0), 2.5))):
        a, b = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
        _close(a(pylucid.tensor(x)), b(torch.tensor(x)))
        assert repr(a) == repr(b)


def test_module_to_empty_set_submodule_compile():
    """Guards against to_empty replacing the Parameter objects, and set_submodule missing nested paths."""
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 3)))
    w = m[0].weight
    assert m.to_empty(device="cpu") is m and m[0].weight is w
    m.set_submodule("1.0", nn.Linear(2, 5))
    assert m[1][0].out_features == 5
    with pytest.raises(AttributeError):
        m.set_submodule("1.7", nn.Linear(2, 5), strict=True)
    with pytest.raises(ValueError, match="not an nn.Module"):
        m.set_submodule("0", 3)
    assert m.compile() is None
    p = pylucid.ones(2, requires_grad=True)
    (p * 4).sum().backward()
    nn.utils.clip_grads_with_norm_([p], 1.0, nn.utils.get_total_norm([p.grad]))
    assert abs(float(p.grad.norm()) - 1.0) < 1e-5


@needs_torch
def test_func_transforms_match_torch():
    """Guards against functional_call leaking the substituted tensors into the module, and the
    func transforms (grad of grad, jacrev, hessian, vjp) giving other values than torch.func."""
    from pylucid.func import functional_call, grad, hessian, jacrev, vjp
    pylucid.manual_seed(0)
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    m2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    xs = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    ys = np.random.RandomState(1).randn(5, 1).astype(np.float32)

    def loss(M, model, call):
        def f(params, x, y):
            return ((call(model, params, (x,)) - y) ** 2).mean()
        return f
    p1 = {k: v.detach() for k, v in m1.named_parameters()}
    p2 = {k: v.detach() for k, v in m2.named_parameters()}
    f1, f2 = loss(pylucid, m1, functional_call), loss(torch, m2, torch.func.functional_call)
    g1 = grad(f1)(p1, pylucid.tensor(xs), pylucid.tensor(ys))
    g2 = torch.func.grad(f2)(p2, torch.tensor(xs), torch.tensor(ys))
    for k in g2:
        _close(g1[k], g2[k], 1e-5)
        assert g1[k].grad_fn is None

    def maml(f, M):
        def outer(params, x, y):
            gi = grad(f)(params, x, y) if M is pylucid else torch.func.grad(f)(params, x, y)
            return f({k: p - 0.1 * gi[k] for k, p in params.items()}, x, y)
        return outer
    o1 = grad(maml(f1, pylucid))(p1, pylucid.tensor(xs), pylucid.tensor(ys))
    o2 = torch.func.grad(maml(f2, torch))(p2, torch.tensor(xs), torch.tensor(ys))
    for k in o2:
        _close(o1[k], o2[k], 1e-5)
    assert m1[0].weight is not p1["0.weight"] and isinstance(m1[0].weight, nn.Parameter)
    t = np.array([1.0, 2.0], np.float32)
    _close(jacrev(pylucid.sin)(pylucid.tensor(t)), torch.func.jacrev(torch.sin)(torch.tensor(t)))
    _close(hessian(lambda v: (v ** 2 * v[0]).sum())(pylucid.tensor(t)),
           torch.func.hessian(lambda v: (v ** 2 * v[0]).sum())(torch.tensor(t)))
    _, fn = vjp(pylucid.sin, pylucid.tensor(t))
    _close(fn(pylucid.ones(2))[0], np.cos(t))
    with pytest.warns(FutureWarning):
        nn.utils.stateless.functional_call(m1, p1, (pylucid.tensor(xs),))
    with pytest.raises(RuntimeError, match="scalar"):
        grad(lambda v: v * 2)(pylucid.ones(2))


_NUMPY_KW_CALLS = [
    ("sum", (), {"axis": 0}), ("sum", (), {"axis": 1, "keepdims": True}), ("mean", (), {"axis": -1}),
    ("cumprod", (), {"axis": 0}), ("cumsum", (), {"axis": 1}), ("max", (), {"axis": 0}),
    ("argmax", (), {"axis": 1, "keepdims": True}), ("amin", (), {"axis": 0, "keepdims": True}),
    ("std", (), {"axis": 0}), ("var", (), {"axis": 1, "keepdims": True}), ("logsumexp", (), {"axis": 1}),
    ("softmax", (), {"axis": 0}), ("all", (), {"axis": 1}), ("any", (), {"axis": 0, "keepdims": True}),
    ("median", (), {"axis": 1}), ("nansum", (), {"axis": 0}), ("nanmean", (), {"axis": 1, "keepdims": True}),
    ("kthvalue", (2,), {"axis": 1}), ("cummax", (), {"axis": 0}), ("sort", (), {"axis": 0}),
    ("unsqueeze", (), {"axis": 0}), ("flatten", (), {}), ("count_nonzero", (), {"axis": 0}),
    ("tensor_split", (2,), {"axis": 1}), ("trapezoid", (), {"axis": 0}), ("prod", (), {"axis": 1}),
]


def _numpy_kw_call(lib, name, args, kw, method):
    x = lib.tensor([[1.0, 4.0, 2.0], [3.0, 0.0, 5.0]])
    if name in ("all", "any"):
        x = x > 2
    if method and hasattr(x, name):
        return getattr(x, name)(*args, **kw)
    return getattr(lib, name)(x, *args, **kw)


def _plain(r):
    if hasattr(r, "tolist"):
        return r.tolist()
    return [_plain(v) for v in r]


def _flat(v):
    return [float(y) for x in v for y in _flat(x)] if isinstance(v, list) else [v]


@pytest.mark.parametrize("name,args,kw", _NUMPY_KW_CALLS, ids=[c[0] + "-" + "-".join(c[2]) for c in _NUMPY_KW_CALLS])
def test_numpy_keyword_names(name, args, kw):
    """Guards against torch.cumprod(x, axis=0) or x.sum(axis=1, keepdims=True), which PyTorch's
    native functions and methods accept, raising TypeError; the result equals the dim/keepdim call
    (and PyTorch's)."""
    renamed = {{"axis": "dim", "keepdims": "keepdim"}.get(k, k): v for k, v in kw.items()}
    for method in (False, True):
        ours = _plain(_numpy_kw_call(pylucid, name, args, kw, method))
        assert ours == _plain(_numpy_kw_call(pylucid, name, args, renamed, method))
        if torch is not None:
            theirs = _plain(_numpy_kw_call(torch, name, args, kw, method))
            assert str(ours).count("[") == str(theirs).count("[")
            np.testing.assert_allclose(_flat(ours), _flat(theirs), rtol=1e-6)


def test_numpy_keyword_names_keep_errors():
    """Guards against the renaming overload hiding real mistakes: an unknown keyword still raises
    TypeError naming the function, and dim given both ways is refused."""
    x = pylucid.ones(2, 3)
    with pytest.raises(TypeError, match="sum"):
        x.sum(dims=0)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pylucid.cumsum(x, axis=0, bogus=1)
    with pytest.raises(TypeError):
        x.sum(dim=0, axis=1)
    with pytest.raises(TypeError):
        pylucid.median(x, dim=0, axis=1)
    assert pylucid.median(x, axis=0, keepdims=True).values.shape == (1, 3)


def test_foreach_functions_match_torch():
    """Guards against torch._foreach_* (used by EMA and optimizer code) being missing or giving
    other values: number, list-of-numbers, list-of-tensor and tensor operands, alpha/value
    keywords, the in-place forms returning the list, and mismatched list lengths refused."""
    rng = np.random.default_rng(4)
    a = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    b = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    cases = [("add", lambda L, o: (1.5,), {}), ("add", lambda L, o: (o,), {"alpha": 0.3}),
             ("sub", lambda L, o: (o,), {"alpha": 2.0}), ("mul", lambda L, o: ([2.0, -1.0],), {}),
             ("div", lambda L, o: (L.tensor(4.0, dtype=L.float64),), {}), ("maximum", lambda L, o: (o,), {}),
             ("clamp_min", lambda L, o: (0.1,), {}), ("pow", lambda L, o: (2,), {}),
             ("lerp", lambda L, o: (o, 0.25), {}), ("addcmul", lambda L, o: (o, o), {"value": 0.5}),
             ("addcdiv", lambda L, o: (o, [t.abs() + 1 for t in o]), {"value": 2.0}), ("sqrt", lambda L, o: (), {}),
             ("exp", lambda L, o: (), {}), ("neg", lambda L, o: (), {})]
    libs = [pylucid] + ([torch] if torch is not None else [])
    results = []
    for lib in libs:
        out = []
        for name, args, kw in cases:
            xs = [lib.tensor(v) for v in a]
            os_ = [lib.tensor(v) for v in b]
            if name == "sqrt":
                xs = [x.abs() for x in xs]
            r = getattr(lib, "_foreach_" + name)(xs, *args(lib, os_), **kw)
            assert isinstance(r, tuple) and len(r) == 2
            c = [x.clone() for x in xs]
            assert getattr(lib, "_foreach_" + name + "_")(c, *args(lib, os_), **kw) is c
            out.append([np.asarray(t) for t in r] + [np.asarray(t) for t in c])
        out.append([np.asarray(t) for t in lib._foreach_norm([lib.tensor(v) for v in a])])
        results.append(out)
    for case in results[0][:-1]:
        for got, want in zip(case[:2], case[2:]):
            np.testing.assert_array_equal(got, want)  # in-place equals out-of-place
    if torch is not None:
        for ours, theirs in zip(results[0], results[1]):
            for o, t in zip(ours, theirs):
                np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="same number of tensors"):
        pylucid._foreach_add([pylucid.ones(2)], [pylucid.ones(2), pylucid.ones(2)])


def test_torch_implementation_module_paths_import():
    """Guards against imports from PyTorch's implementation files stopping a script under the
    alias (``from torch.distributions.categorical import Categorical`` in RL code,
    ``from torch.nn.modules.batchnorm import _BatchNorm`` / ``normalization`` / ``instancenorm`` in
    custom layers, ``torch.nn.common_types``, ``torch.types``, ``torch.utils.data._utils.collate``,
    ``torch.serialization.add_safe_globals``), and against those paths giving other objects."""
    code = """
from torch.distributions.normal import Normal
from torch.distributions.categorical import Categorical
from torch.distributions.multivariate_normal import MultivariateNormal
from torch.distributions.relaxed_categorical import RelaxedOneHotCategorical
from torch.distributions.transformed_distribution import TransformedDistribution
from torch.distributions.gamma import Gamma
from torch.nn.modules.normalization import LayerNorm, GroupNorm
from torch.nn.modules.activation import MultiheadAttention, LeakyReLU
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import _pair
from torch.nn.common_types import _size_2_t
from torch.types import Number, _size
from torch.utils.data._utils.collate import default_collate
from torch.serialization import add_safe_globals, safe_globals, get_safe_globals
import torch, torch.nn as nn
assert Normal is torch.distributions.Normal and Categorical is torch.distributions.Categorical
assert torch.distributions.normal.Normal is Normal and Gamma is torch.distributions.Gamma
assert LayerNorm is nn.LayerNorm and MultiheadAttention is nn.MultiheadAttention and LeakyReLU is nn.LeakyReLU
assert issubclass(nn.InstanceNorm2d, _InstanceNorm) and issubclass(nn.BatchNorm2d, _BatchNorm)
assert nn.utils.clip_grad_norm_ is not None and _pair(3) == (3, 3)
assert default_collate([torch.ones(2), torch.zeros(2)]).shape == (2, 2)
add_safe_globals([Normal])
with safe_globals([Categorical]):
    assert get_safe_globals() == [Normal, Categorical]
assert get_safe_globals() == [Normal]
try:
    from torch.nn.modules.normalization import NoSuchLayer
except ImportError:
    print("ok")
"""
    r = subprocess.run([sys.executable, "-c", "import pylucid.as_torch as a; a.install(); exec(open(0).read())"],
                       input=code, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
