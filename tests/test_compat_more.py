"""Gaps the compatibility programs (tests/compat/programs) found, each pinned here: PyTorch's
node names in printed tensors and grad_fns, Embedding's max_norm / scale_grad_by_freq, device=
on Linear and LayerNorm, MultiheadAttention's out_proj class, backends flags, the as_torch
import finder, autograd.grad's materialize_grads and wording, retain_grad after hooks,
load_state_dict's report, 0-d indices in gather/scatter and torch.accelerator. Checked against
torch where it is installed."""
import subprocess
import sys

import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
from pylucid.autograd import gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def _display(t):
    return repr(t).split("grad_fn=<")[1].split(">")[0]


INDEX_CASES = ["x[0]", "x[1:]", "x[:]", "x[:, 0]", "x[0, 1:3]", "x[1:3, 0]", "x[..., None]", "x[None]",
               "x[:, :]", "x[...]", "x[0, :]", "x[:, 0:4, 1:]", "x[0:3, None]", "x[0, 1, 2]", "x[::2]"]


def test_basic_indexing_names_its_node_after_the_last_view():
    """Guards against every x[...] printing as one made-up node (GetitemBackward0) where PyTorch
    shows SelectBackward0, SliceBackward0, UnsqueezeBackward0 or AliasBackward0."""
    x = pylucid.randn(3, 4, 5, requires_grad=True)
    expected = ["Select", "Slice", "Slice", "Select", "Slice", "Select", "Unsqueeze", "Unsqueeze", "Alias",
                "Alias", "Select", "Slice", "Unsqueeze", "Select", "Slice"]
    for expr, name in zip(INDEX_CASES, expected):
        y = eval(expr)  # noqa: S307
        assert y.grad_fn.name() == name + "Backward", expr
        assert _display(y) == name + "Backward0", expr
    y = x[0, 1:3]
    y.sum().backward()
    assert x.grad[0, 1:3].eq(1).all() and x.grad.sum().item() == 10.0


@needs_torch
def test_node_names_match_torch_in_reprs():
    """Guards against printed tensors naming their grad_fn differently from PyTorch in the
    cases tutorials print (a Linear's output, a loss, a sum over a dim, x[i], custom Functions)."""
    torch.manual_seed(0)
    cases = {
        "x[0]": None, "x[1:]": None, "x[:, 0]": None, "x[None]": None, "x[:, :]": None,
        "F.linear(x, w, b)": None, "F.linear(x, w)": None, "F.linear(x[None], w, b)": None,
        "x @ w.T": None, "x.sum()": None, "x.sum(0)": None, "x.mean(1)": None, "x.max()": None,
        "x.max(1)[0]": None, "x.reshape(-1)": None, "x.flatten()": None, "x.norm()": None,
        "F.cross_entropy(x, t)": None, "F.layer_norm(x, (4,))": None, "x.log1p()": None,
        "F.pad(x, (1, 1))": None, "x.movedim(0, 1)": None, "x.narrow(0, 1, 1)": None, "x.chunk(2)[0]": None,
        "torch.bmm(x[None], w.T[None])": None, "torch.dot(b, b)": None, "torch.mv(w, x[0])": None,
    }
    for lib, env in ((torch, {}), (pylucid, {})):
        lib.manual_seed(0)
        env.update(torch=lib, F=lib.nn.functional, x=lib.randn(2, 4, requires_grad=True),
                   w=lib.randn(3, 4, requires_grad=True), b=lib.randn(3, requires_grad=True),
                   t=lib.tensor([0, 3]))
        for expr in cases:
            name = _display(eval(expr, env))  # noqa: S307
            if lib is torch:
                cases[expr] = name
            else:
                assert name == cases[expr], (expr, name, cases[expr])
    y = nn.Linear(4, 3)(pylucid.randn(2, 4))
    assert str(y.grad_fn).startswith("<AddmmBackward0 object at 0x")


def test_custom_function_nodes_are_not_numbered():
    """Guards against a custom Function's node printing as MyFnBackward0 (PyTorch prints
    MyFnBackward, and <torch.autograd.function.MyFnBackward object at ...>)."""
    class Twice(pylucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Twice.apply(pylucid.ones(2, requires_grad=True))
    assert _display(y) == "TwiceBackward"
    assert repr(y.grad_fn).startswith("<pylucid.autograd.function.TwiceBackward object at 0x")


def test_embedding_max_norm_renormalises_the_looked_up_rows_in_place():
    """Guards against nn.Embedding(max_norm=...) being refused, or renormalising rows it was
    not asked for or to a different norm than PyTorch's max_norm / (norm + 1e-7)."""
    emb = nn.Embedding(5, 3, max_norm=1.0)
    with pylucid.no_grad():
        emb.weight.copy_(pylucid.tensor([[3.0, 4.0, 0.0], [0.1, 0.2, 0.2], [1.0, 1.0, 1.0], [6.0, 0.0, 8.0],
                                         [0.0, 2.0, 0.0]]))
    before = emb.weight.detach().clone()
    out = emb(pylucid.tensor([[0, 1], [2, 0]]))
    w = emb.weight.detach().numpy()
    b = before.numpy()
    for r in (0, 2):
        n = np.linalg.norm(b[r])
        np.testing.assert_allclose(w[r], b[r] * (1.0 / (n + 1e-7)), rtol=1e-6)
    np.testing.assert_array_equal(w[[1, 3, 4]], b[[1, 3, 4]])  # short row 1, unused rows 3 and 4
    np.testing.assert_allclose(out.detach().numpy()[0, 0], w[0], rtol=1e-6)
    emb1 = nn.Embedding(2, 2, max_norm=2.0, norm_type=1.0)
    with pylucid.no_grad():
        emb1.weight.copy_(pylucid.tensor([[3.0, -1.0], [0.5, 0.5]]))
    emb1(pylucid.tensor([0, 1]))
    np.testing.assert_allclose(emb1.weight.detach().numpy()[0], np.array([3.0, -1.0]) * 2.0 / (4.0 + 1e-7),
                               rtol=1e-6)
    assert repr(emb1) == "Embedding(2, 2, max_norm=2.0, norm_type=1.0)"


def test_embedding_scale_grad_by_freq_divides_by_the_batch_count():
    """Guards against scale_grad_by_freq being refused or ignored: a row's gradient is the sum
    over its occurrences divided by how many there are."""
    idx = pylucid.tensor([[0, 2, 0], [0, 1, 2]])
    emb = nn.Embedding(4, 2, scale_grad_by_freq=True)
    g = pylucid.randn(2, 3, 2)
    emb(idx).backward(g)
    gn, ix = g.numpy(), idx.numpy()
    want = np.zeros((4, 2), np.float32)
    counts = np.bincount(ix.reshape(-1), minlength=4)
    for (i, j), r in np.ndenumerate(ix):
        want[r] += gn[i, j] / counts[r]
    np.testing.assert_allclose(emb.weight.grad.numpy(), want, rtol=1e-6, atol=1e-7)
    assert repr(emb) == "Embedding(4, 2, scale_grad_by_freq=True)"
    w = pylucid.randn(4, 3, dtype=pylucid.float64, requires_grad=True)
    (gw,) = pylucid.autograd.grad(F.embedding(idx, w, scale_grad_by_freq=True).sum(), w)
    assert gw[:, 0].tolist() == [1.0, 1.0, 1.0, 0.0]  # each used row's gradient averages to 1
    with pytest.raises(pylucid.LucidError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)


@needs_torch
def test_embedding_max_norm_matches_torch():
    """Guards against the renormalised table or the output differing from PyTorch's."""
    w = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32) * 2
    idx = [[0, 3, 3], [5, 1, 0]]
    te = torch.nn.Embedding(6, 4, max_norm=1.5, norm_type=3.0, scale_grad_by_freq=True)
    pe = nn.Embedding(6, 4, max_norm=1.5, norm_type=3.0, scale_grad_by_freq=True)
    with torch.no_grad():
        te.weight.copy_(torch.from_numpy(w))
    with pylucid.no_grad():
        pe.weight.copy_(pylucid.tensor(w))
    to, po = te(torch.tensor(idx)), pe(pylucid.tensor(idx))
    (to * to).sum().backward()
    (po * po).sum().backward()
    np.testing.assert_allclose(po.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pe.weight.detach().numpy(), te.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pe.weight.grad.numpy(), te.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_layers_take_device_and_dtype():
    """Guards against nn.Linear(..., device=device) or nn.LayerNorm(..., device=, dtype=)
    stopping a program that passes its device to every layer."""
    lin = nn.Linear(3, 2, device="cpu", dtype=pylucid.float64)
    assert lin.weight.dtype == pylucid.float64
    ln = nn.LayerNorm(4, device=pylucid.device("cpu"), dtype=pylucid.float64)
    assert ln.weight.dtype == ln.bias.dtype == pylucid.float64
    assert nn.Embedding(3, 2, device="cpu").weight.shape == (3, 2)
    for make in (lambda: nn.Linear(3, 2, device="cuda"), lambda: nn.LayerNorm(3, device="cuda"),
                 lambda: nn.Embedding(3, 2, device="cuda")):
        with pytest.raises(pylucid.LucidError, match="cuda"):
            make()


def test_multihead_attention_out_proj_is_named_as_in_torch():
    """Guards against print(model) of a MultiheadAttention differing from PyTorch's, whose
    out_proj is a NonDynamicallyQuantizableLinear."""
    from pylucid.nn.modules.linear import NonDynamicallyQuantizableLinear
    mha = nn.MultiheadAttention(8, 2)
    assert isinstance(mha.out_proj, NonDynamicallyQuantizableLinear) and isinstance(mha.out_proj, nn.Linear)
    assert "(out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)" in repr(mha)


def test_backend_precision_flags_can_be_set():
    """Guards against nanoGPT's torch.backends.cuda.matmul.allow_tf32 = True (and
    cudnn.allow_tf32) stopping a CPU run."""
    m = pylucid.backends.cuda.matmul
    assert m.allow_tf32 is False and m.allow_fp16_reduced_precision_reduction is True
    m.allow_tf32 = True
    try:
        assert pylucid.backends.cuda.matmul.allow_tf32 is True
    finally:
        m.allow_tf32 = False
    assert pylucid.backends.cudnn.allow_tf32 is True


def test_accelerator_reports_none():
    """Guards against the current tutorials' device line (torch.accelerator) failing: there is
    no accelerator, so the CPU branch is taken, and device calls raise as PyTorch's do."""
    acc = pylucid.accelerator
    dev = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert dev == "cpu" and acc.device_count() == 0 and acc.current_accelerator(check_available=True) is None
    with pytest.raises(RuntimeError, match="none is available"):
        acc.synchronize()
    with pytest.raises(RuntimeError, match="none is available"):
        acc.current_device_index()


def test_as_torch_aliases_any_submodule_pylucid_has():
    """Guards against `from torch.autograd.function import once_differentiable` (or
    torch.nn.modules.linear) importing pylucid's package a second time under torch's name."""
    code = ("from pylucid import as_torch; as_torch.install()\n"
            "from torch.autograd.function import once_differentiable, Function\n"
            "import torch.nn.modules.linear as lin, torch.accelerator\n"
            "import pylucid, pylucid.autograd.function as f\n"
            "assert Function is f.Function and lin is pylucid.nn.modules.linear\n"
            "assert torch.accelerator is pylucid.accelerator\n"
            "try:\n    import torch.no_such_module\nexcept ImportError:\n    pass\nelse:\n    raise SystemExit(1)\n"
            "as_torch.uninstall()\n"
            "import sys\nassert not any(k == 'torch' or k.startswith('torch.') for k in sys.modules)\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_autograd_grad_materialize_grads_and_unused_wording():
    """Guards against autograd.grad(materialize_grads=True) being refused, and the unused-input
    error not saying what PyTorch's says."""
    p = pylucid.tensor(2.0, requires_grad=True)
    u = pylucid.tensor([1.0, 2.0], requires_grad=True)
    gp, gu = pylucid.autograd.grad(p * p, (p, u), materialize_grads=True)
    assert gp.item() == 4.0 and gu.tolist() == [0.0, 0.0] and gu.shape == u.shape
    with pytest.raises(ValueError, match="allow_unused"):
        pylucid.autograd.grad(p * p, (p, u), allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        pylucid.autograd.grad(p * p, (p, u))
    assert pylucid.autograd.grad(p * p, (p, u), allow_unused=True)[1] is None
    with pytest.raises(pylucid.LucidError, match="grad_outputs"):  # a batch of grad_outputs is required
        pylucid.autograd.grad(p * p, p, is_grads_batched=True)


def test_is_anomaly_enabled_at_the_top_level():
    """Guards against torch.is_anomaly_enabled() missing."""
    assert pylucid.is_anomaly_enabled() is False
    with pylucid.autograd.detect_anomaly():
        assert pylucid.is_anomaly_enabled() and pylucid.autograd.is_anomaly_enabled()
    assert not pylucid.is_anomaly_enabled()


def test_retained_grad_sees_hooks_registered_after_retain_grad():
    """Guards against y.grad being the gradient before y's hooks ran when y.retain_grad() came
    first: PyTorch always runs the retains-grad hook last."""
    for retain_first in (True, False):
        x = pylucid.tensor([1.0, -2.0], requires_grad=True)
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g * 0.5)
        if not retain_first:
            y.retain_grad()
        (y * y).sum().backward()
        assert y.grad.tolist() == [2.0, -4.0]  # 2y halved
        assert x.grad.tolist() == [4.0, -8.0]


def test_error_wording_for_in_place_on_a_leaf_and_integer_requires_grad():
    """Guards against the messages PyTorch users search for being missing."""
    leaf = pylucid.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf.add_(1)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        pylucid.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        pylucid.tensor([1, 2]).requires_grad = True


def test_load_state_dict_reports_every_problem():
    """Guards against load_state_dict stopping at the first bad key instead of listing, as
    PyTorch does, every missing/unexpected key and size mismatch."""
    a, b = nn.Linear(2, 3), nn.Linear(2, 4)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(a.state_dict())
    msg = str(e.value)
    assert isinstance(e.value, pylucid.ShapeMismatch)
    assert msg.startswith("Error(s) in loading state_dict for Linear:\n\t")
    assert ("size mismatch for weight: copying a param with shape pylucid.Size([3, 2]) from checkpoint, the "
            "shape in current model is pylucid.Size([4, 2]).") in msg
    assert "size mismatch for bias" in msg
    sd = nn.Linear(2, 4).state_dict()
    del sd["bias"]
    sd["extra"] = pylucid.zeros(1)
    before = b.weight.detach().clone()
    with pytest.raises(pylucid.LucidError) as e:
        b.load_state_dict(sd)
    assert 'Missing key(s) in state_dict: "bias". ' in str(e.value)
    assert 'Unexpected key(s) in state_dict: "extra". ' in str(e.value)
    # As PyTorch's, the entries that fit are copied before the error is raised.
    assert pylucid.equal(b.weight, sd["weight"]) and not pylucid.equal(before, b.weight)
    assert b.load_state_dict(sd, strict=False) == (["bias"], ["extra"])


def test_zero_dim_index_along_a_vector():
    """Guards against x.gather(0, tensor(i)) and zeros(10).scatter_(0, tensor(y), value=1) (the
    tutorials' one-hot target transform) being refused: PyTorch reads a 0-d index as 1 element."""
    x = pylucid.arange(5.0)
    g = x.gather(0, pylucid.tensor(2))
    assert g.shape == () and g.item() == 2.0
    assert pylucid.zeros(4).scatter_(0, pylucid.tensor(1), value=1).tolist() == [0, 1, 0, 0]
    assert pylucid.zeros(4).scatter(0, pylucid.tensor(3), pylucid.tensor(2.0)).tolist() == [0, 0, 0, 2]
    assert pylucid.zeros(3).scatter_add(0, pylucid.tensor(1), pylucid.tensor(3.0)).tolist() == [0, 3, 0]
    z = pylucid.ones(3)
    z.scatter_add_(0, pylucid.tensor(2), pylucid.tensor(4.0))
    assert z.tolist() == [1, 1, 5]
    assert pylucid.zeros(3).scatter_reduce(0, pylucid.tensor(0), pylucid.tensor(7.0), "sum").tolist() == [7, 0, 0]
    s = pylucid.tensor(5.0).scatter_add(0, pylucid.tensor(0), pylucid.tensor(1.0))
    assert s.shape == () and s.item() == 6.0
    with pytest.raises(IndexError):
        x.gather(1, pylucid.tensor(0))
    with pytest.raises(IndexError):
        x.gather(0, pylucid.tensor(7))


def test_zero_dim_index_gradients():
    """Guards against the 0-d index path of gather/scatter_add losing the gradient."""
    x = pylucid.randn(5, dtype=pylucid.float64, requires_grad=True)
    src = pylucid.randn((), dtype=pylucid.float64, requires_grad=True)
    i = pylucid.tensor(3)
    assert gradcheck(lambda x: x.gather(0, i), (x,))
    assert gradcheck(lambda x, s: x.scatter_add(0, i, s), (x, src))
    assert gradcheck(lambda x: pylucid.gather(x, -1, i), (x,))


# ---- smaller names the API sweep found missing ----------------------------------------------

def _both(fn, *arrays, grad=True):
    """fn(lib, *tensors) under torch and pylucid: values (and the gradients of their sum) agree."""
    outs = []
    for lib in (torch, pylucid):
        ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        y = fn(lib, *ts)
        if grad:
            y.sum().backward()
        outs.append((y.detach().numpy(), [t.grad.numpy() if grad and t.grad is not None else None for t in ts]))
    (a, ga), (b, gb) = outs
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    for u, v in zip(ga, gb):
        if u is not None:
            np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)


def _unpool2(lib, t):
    y, i = lib.nn.functional.max_pool2d(t, 2, return_indices=True)
    return lib.nn.MaxUnpool2d(2)(y, i)


def _unpool2_size(lib, t):
    y, i = lib.nn.functional.max_pool2d(t[..., :5, :5], 2, return_indices=True)
    return lib.nn.functional.max_unpool2d(y, i, 2, output_size=(5, 5))


def _unpool1(lib, t):
    y, i = lib.nn.functional.max_pool1d(t, 2, return_indices=True)
    return lib.nn.MaxUnpool1d(2)(y, i)


@needs_torch
def test_new_functions_match_torch():
    """Guards against renorm, masked_scatter, pdist, LPPool, MaxUnpool and
    TripletMarginWithDistanceLoss giving values or gradients other than PyTorch's."""
    r = np.random.default_rng(0)
    x = r.standard_normal((3, 4)).astype(np.float32)
    img = r.standard_normal((2, 3, 6, 6)).astype(np.float32)
    a, p, n = (r.standard_normal((5, 3)).astype(np.float32) for _ in range(3))
    _both(lambda L, t: L.renorm(t, 2, 0, 1.0), x)
    _both(lambda L, t: t.renorm(p=1, dim=1, maxnorm=0.5), x)
    _both(lambda L, t: t.masked_scatter(t > 0, L.arange(12.0)), x)
    _both(lambda L, t, s: t.masked_scatter(L.tensor([[True], [False], [True]]), s), x,
          r.standard_normal(20).astype(np.float32))
    _both(lambda L, t: L.nn.functional.pdist(t), x)
    _both(lambda L, t: L.nn.functional.pdist(t, p=1), x)
    _both(lambda L, t: L.nn.functional.lp_pool2d(t, 2, 2), img)
    _both(lambda L, t: L.nn.LPPool2d(3, (2, 3), stride=1)(t), np.abs(img))
    _both(lambda L, t: L.nn.LPPool1d(2, 3)(t), img[0])
    _both(_unpool2, img)
    _both(_unpool2_size, img)
    _both(_unpool1, img[0])
    _both(lambda L, a, p, n: L.nn.TripletMarginWithDistanceLoss()(a, p, n), a, p, n)
    _both(lambda L, a, p, n: L.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - L.nn.functional.cosine_similarity(u, v), swap=True, margin=0.5,
        reduction="sum"), a, p, n)
    _both(lambda L, t: L.hsplit(t, 2)[1] * 2 + t.mH.sum() + L.adjoint(t).sum(), x)
    for mod in ("MaxUnpool2d(2)", "LPPool2d(2, 3)", "TripletMarginWithDistanceLoss()", "MaxUnpool1d(3, 2)"):
        assert repr(eval("pylucid.nn." + mod)) == repr(eval("torch.nn." + mod))  # noqa: S307
    for expr in ("L.tensor([-8, 5]) >> 1", "L.tensor([-8, 5]) << 2", "L.bitwise_left_shift(L.tensor([3]), 4)",
                 "L.bitwise_xor(L.tensor([True, False]), L.tensor([True, True]))", "L.bitwise_and(L.tensor([6]), 3)",
                 "L.bitwise_or(L.tensor([6]), L.tensor([[1], [8]]))", "L.bitwise_not(L.tensor([0, -3]))",
                 "L.gcd(L.tensor([-12, 0]), L.tensor([8, 5]))", "L.lcm(L.tensor([4, -6]), L.tensor([6, 4]))"):
        assert eval(expr, {"L": pylucid}).tolist() == eval(expr, {"L": torch}).tolist(), expr  # noqa: S307
    assert pylucid.result_type(pylucid.tensor([1, 2]), 2.5) == pylucid.float32
    assert str(torch.result_type(torch.tensor([1, 2]), 2.5)) == "torch.float32"


def test_new_differentiable_functions_pass_gradcheck():
    """Guards against a wrong backward in the composite ops added for PyTorch parity."""
    x = pylucid.randn(3, 4, dtype=pylucid.float64, requires_grad=True)
    s = pylucid.randn(12, dtype=pylucid.float64, requires_grad=True)
    img = pylucid.randn(1, 2, 4, 4, dtype=pylucid.float64).abs().add(0.1).requires_grad_()
    a, p, n = (pylucid.randn(4, 3, dtype=pylucid.float64, requires_grad=True) for _ in range(3))
    mask = pylucid.tensor([[True, False, True, False]] * 3)
    assert gradcheck(lambda t: pylucid.renorm(t, 2, 0, 1.0), (x,))
    assert gradcheck(lambda t, s: t.masked_scatter(mask, s), (x, s))
    assert gradcheck(lambda t: F.pdist(t), (x,))
    assert gradcheck(lambda t: F.lp_pool2d(t, 2, 2), (img,))
    y, i = F.max_pool2d(img.detach(), 2, return_indices=True)
    assert gradcheck(lambda t: F.max_unpool2d(t, i, 2), (y.requires_grad_(),))
    assert gradcheck(lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True), (a, p, n))


def test_new_functions_without_torch():
    """Guards the values of the small additions against hand-computed ones (no torch needed)."""
    x = pylucid.tensor([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(pylucid.renorm(x, 2, 0, 1.0).numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    assert F.pdist(pylucid.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist() == [5.0, 1.0, pytest.approx(4.2426405)]
    u = F.max_unpool2d(pylucid.tensor([[[[5.0]]]]), pylucid.tensor([[[[3]]]]), 2)
    assert u.tolist() == [[[[0.0, 0.0], [0.0, 5.0]]]]
    m = pylucid.zeros(2, 2).masked_scatter(pylucid.tensor([[False, True], [True, True]]), pylucid.tensor([7.0, 8.0, 9.0]))
    assert m.tolist() == [[0.0, 7.0], [8.0, 9.0]]
    assert (pylucid.tensor([-7]) >> 1).item() == -4 and (pylucid.tensor([3]) << 2).item() == 12
    with pytest.raises(TypeError):
        pylucid.bitwise_and(pylucid.tensor([1.0]), 1)
    assert [t.shape for t in pylucid.vsplit(pylucid.zeros(4, 2), 2)] == [(2, 2), (2, 2)]
    assert [t.shape for t in pylucid.dsplit(pylucid.zeros(1, 2, 6), [1, 4])] == [(1, 2, 1), (1, 2, 3), (1, 2, 2)]
    with pytest.raises(RuntimeError, match="divisible"):
        pylucid.hsplit(pylucid.zeros(2, 3), 2)
    with pytest.raises(ValueError):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0)


def test_tensor_surface_additions():
    """Guards against the in-place shape methods, Tensor.new, stride(dim), numpy(force=True),
    layouts and memory formats, is_nonzero/is_complex and empty_strided being missing."""
    x = pylucid.zeros(3, 4)
    assert x.unsqueeze_(0).shape == (1, 3, 4) and x.squeeze_(0).shape == (3, 4)
    assert x.t_().shape == (4, 3) and x.transpose_(0, 1).shape == (3, 4) and x.swapaxes_(0, 1).shape == (4, 3)
    with pytest.raises(pylucid.LucidError, match="requires grad"):
        pylucid.zeros(2, requires_grad=True).unsqueeze_(0)
    assert pylucid.zeros(2, 3).stride(1) == 1 and pylucid.zeros(2, 3).stride(-2) == 3
    w = pylucid.ones(2, requires_grad=True)
    assert w.numpy(force=True).tolist() == [1.0, 1.0]
    assert pylucid.ones(1, dtype=pylucid.bfloat16).numpy(force=True).dtype == np.float32
    assert pylucid.zeros(1).layout is pylucid.strided and repr(pylucid.strided) == "pylucid.strided"
    y = pylucid.randn(1, 2, 3, 3)
    assert pylucid.equal(y.contiguous(memory_format=pylucid.channels_last), y)
    assert pylucid.equal(y.clone(memory_format=pylucid.contiguous_format), y)
    assert pylucid.equal(pylucid.clone(y, memory_format=pylucid.preserve_format), y)
    t = pylucid.tensor([1.5])
    assert t.new(2, 3).shape == (2, 3) and t.new().shape == (0,) and t.new([1, 2]).tolist() == [1.0, 2.0]
    assert t.new([1, 2]).dtype == pylucid.float32
    assert pylucid.is_nonzero(pylucid.tensor([2])) and not pylucid.is_nonzero(pylucid.tensor(0.0))
    with pytest.raises(RuntimeError, match="more than one value"):
        pylucid.is_nonzero(pylucid.tensor([1, 2]))
    assert not pylucid.is_complex(t) and not t.is_complex()
    assert pylucid.empty_strided((2, 3), (3, 1)).shape == (2, 3)
    assert pylucid.narrow_copy(pylucid.arange(5), 0, 1, 2).tolist() == [1, 2]
    assert pylucid.nn.Linear(1, 1).share_memory().training


def test_optimizers_keep_pytorchs_implementation_switches():
    """Guards against Adam(foreach=..., fused=...) being refused, and print(optimizer) / the
    param groups missing the keys PyTorch's have."""
    p = [nn.Parameter(pylucid.ones(2))]
    adam = pylucid.optim.Adam(p, foreach=False, fused=None, capturable=False, differentiable=False)
    assert {"foreach", "fused", "capturable", "differentiable", "decoupled_weight_decay"} <= set(adam.param_groups[0])
    assert adam.param_groups[0]["decoupled_weight_decay"] is False
    assert pylucid.optim.AdamW(p).param_groups[0]["decoupled_weight_decay"] is True
    assert {"foreach", "fused", "differentiable"} <= set(pylucid.optim.SGD(p, lr=0.1, fused=None).param_groups[0])
    # Adam(decoupled_weight_decay=True) is AdamW
    for opt_cls, kw in ((pylucid.optim.Adam, {"decoupled_weight_decay": True}), (pylucid.optim.AdamW, {})):
        w = nn.Parameter(pylucid.tensor([1.0, -2.0]))
        opt = opt_cls([w], lr=0.1, weight_decay=0.5, **kw)
        (w * w).sum().backward()
        opt.step()
        if opt_cls is pylucid.optim.Adam:
            first = w.detach().clone()
    assert pylucid.equal(first, w.detach())


def test_erfinv_keeps_a_zero_dim_shape():
    """Guards against erfinv (and so Normal.icdf) turning a 0-d tensor into shape (1,)."""
    assert pylucid.erfinv(pylucid.tensor(0.3)).shape == ()
    assert pylucid.tensor([[0.3, -0.2]]).erfinv().shape == (1, 2)
    v = pylucid.distributions.Normal(0.0, 1.0).icdf(pylucid.tensor(0.3))
    assert v.shape == () and v.item() == pytest.approx(-0.5244005, abs=1e-6)


def test_numpy_backed_ops_keep_zero_dim_results():
    """Guards against results computed through numpy turning 0-d into shape (1,) (numpy's
    ascontiguousarray makes a 0-d array 1-d): det of a matrix, a 0-d bfloat16 tensor, integer
    trunc division of 0-d tensors, shifts of a 0-d tensor."""
    assert pylucid.linalg.det(pylucid.eye(3) * 2).shape == ()
    assert pylucid.tensor(2.0, dtype=pylucid.bfloat16).shape == ()
    assert pylucid.tensor(7).div(pylucid.tensor(-2), rounding_mode="trunc").shape == ()
    assert (pylucid.tensor(5) >> 1).shape == () and (pylucid.tensor(5) >> 1).item() == 2


def test_more_small_functions():
    """Guards against unique_consecutive, cumulative_trapezoid, vander, apply_/map_,
    share_memory_, clip_grad_*(foreach=...), autocast("cpu", ...) and nn.modules.module being
    missing or disagreeing with PyTorch's documented results."""
    v, inv, cnt = pylucid.unique_consecutive(pylucid.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True,
                                             return_counts=True)
    assert v.tolist() == [1, 2, 3, 1, 2] and inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert cnt.tolist() == [2, 2, 1, 2, 1]
    rows, c = pylucid.unique_consecutive(pylucid.tensor([[1, 1], [1, 1], [2, 3]]), dim=0, return_counts=True)
    assert rows.tolist() == [[1, 1], [2, 3]] and c.tolist() == [2, 1]
    ct = pylucid.cumulative_trapezoid(pylucid.tensor([[1.0, 2, 4], [1, 1, 1]]), dx=0.5)
    assert ct.tolist() == [[0.75, 2.25], [0.5, 1.0]]
    assert pylucid.cumulative_trapezoid(pylucid.tensor([1.0, 2, 4]), pylucid.tensor([0.0, 1, 3])).tolist() == [1.5, 7.5]
    y = pylucid.tensor([1.0, 2.0, 4.0], dtype=pylucid.float64, requires_grad=True)
    assert gradcheck(lambda t: pylucid.cumulative_trapezoid(t, dx=0.5), (y,))
    assert pylucid.vander(pylucid.tensor([1, 2, 3])).tolist() == [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    assert pylucid.vander(pylucid.tensor([1.0, 2.0]), N=3, increasing=True).tolist() == [[1, 1, 1], [1, 2, 4]]
    t = pylucid.tensor([1.0, 2.0])
    assert t.apply_(lambda v: v * 3) is t and t.tolist() == [3.0, 6.0]
    assert t.map_(pylucid.tensor([1.0, 2.0]), lambda a, b: a - b).tolist() == [2.0, 4.0]
    assert t.share_memory_() is t and not t.is_shared()
    lin = nn.Linear(2, 2)
    lin(pylucid.ones(1, 2)).sum().backward()
    nn.utils.clip_grad_norm_(lin.parameters(), 1.0, foreach=None)
    nn.utils.clip_grad_value_(lin.parameters(), 0.1, foreach=True)
    assert lin.weight.grad.abs().max().item() <= 0.1 + 1e-7
    with pylucid.autocast("cpu", dtype=pylucid.bfloat16):
        assert (pylucid.ones(2, 2) @ pylucid.ones(2, 2)).dtype == pylucid.bfloat16
    with pylucid.amp.autocast(device_type="cpu", enabled=False):
        assert (pylucid.ones(2, 2) @ pylucid.ones(2, 2)).dtype == pylucid.float32
    with pytest.raises(pylucid.LucidError, match="cuda"):
        pylucid.autocast("cuda")
    from pylucid.nn.modules.module import Module
    assert Module is nn.Module


def test_prune_reparametrises_and_removes():
    """Guards against nn.utils.prune missing or its layout differing from PyTorch's
    (weight_orig parameter, weight_mask buffer, a pre-hook recomputing weight)."""
    from pylucid.nn.utils import prune
    lin = nn.Linear(4, 3)
    with pylucid.no_grad():
        lin.weight.copy_(pylucid.arange(12.0).reshape(3, 4) - 5.5)
    prune.l1_unstructured(lin, "weight", amount=0.25)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in lin.named_buffers()] == ["weight_mask"]
    assert lin.weight_mask.view(-1).tolist() == [1] * 4 + [0] * 3 + [1] * 5  # |w| smallest: 4.5.. -> -0.5, 0.5, ...
    assert sorted((lin.weight == 0).nonzero()[:, 1].tolist()) == [0, 1, 2]
    prune.ln_structured(lin, "weight", amount=1, n=1, dim=0)  # drops the row of smallest L1 norm
    hook = next(h for h in lin._forward_pre_hooks.values() if h._tensor_name == "weight")
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
    assert lin.weight[1].abs().sum().item() == 0 and lin.weight[0].abs().sum().item() > 0
    with pylucid.no_grad():
        lin.weight_orig.add_(1.0)
    lin(pylucid.ones(1, 4))  # the pre-hook recomputes weight
    assert lin.weight[1].abs().sum().item() == 0 and lin.weight[0, 0].item() == -4.5
    assert prune.is_pruned(lin)
    prune.remove(lin, "weight")
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"] and list(lin.named_buffers()) == []
    assert isinstance(lin.weight, nn.Parameter) and lin.weight[1].abs().sum().item() == 0
    assert not prune.is_pruned(lin)
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(lin, "weight")
    with pytest.raises(ValueError):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5)


def test_prune_global_and_custom():
    """Guards against global_unstructured not pruning the smallest fraction across all the
    tensors together, and a custom BasePruningMethod not being usable."""
    from pylucid.nn.utils import prune
    a, b = nn.Linear(10, 10), nn.Linear(10, 5)
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=0.2)
    zeros = int((a.weight == 0).sum()) + int((b.weight == 0).sum())
    assert zeros == 30
    kept = pylucid.cat([a.weight_orig[a.weight_mask == 1].abs(), b.weight_orig[b.weight_mask == 1].abs()])
    cut = pylucid.cat([a.weight_orig[a.weight_mask == 0].abs(), b.weight_orig[b.weight_mask == 0].abs()])
    assert cut.max().item() <= kept.min().item()

    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    lin = nn.Linear(2, 4)
    EveryOther.apply(lin, "bias")
    assert lin.bias_mask.tolist() == [0, 1, 0, 1]
    m = prune.custom_from_mask(nn.Linear(2, 2), "weight", mask=pylucid.tensor([[1.0, 0.0], [0.0, 1.0]]))
    assert m.weight[0, 1].item() == 0 and m.weight[1, 1].item() != 0


DIST_SCRIPT = """
from torch.distributions import Cauchy, Exponential, Laplace, LogNormal, Geometric
torch.manual_seed(0)
out = [torch.empty(2, 3).cauchy_(1.0, 2.0), torch.empty(4, dtype=torch.float64).geometric_(0.25)]
for d in [Exponential(torch.tensor([0.5, 2.0])), Laplace(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])),
          Cauchy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])),
          LogNormal(torch.tensor([0.0, 0.3]), torch.tensor([1.0, 0.5])), Geometric(torch.tensor([0.3, 0.8])),
          Geometric(logits=torch.tensor([0.2, -1.0]))]:
    s = d.sample((3,))
    out += [s, d.log_prob(s), d.entropy(), d.mean, d.variance, d.stddev, d.mode]
    if not isinstance(d, Geometric):
        out += [d.cdf(s), d.icdf(torch.tensor([0.2, 0.7])), d.rsample((2,))]
"""  # noqa: E501


@needs_torch
def test_more_distributions_match_torch():
    """Guards against Exponential, Laplace, LogNormal and Geometric drawing other samples or
    giving other log_prob/cdf/icdf/entropy/moments than PyTorch's for the same seed."""
    results = []
    for lib, mod in ((torch, "torch.distributions"), (pylucid, "pylucid.distributions")):
        ns = {"torch": lib}
        exec(DIST_SCRIPT.replace("torch.distributions", mod), ns)  # noqa: S102
        results.append([t.detach().numpy() for t in ns["out"]])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_more_distributions_formulas_and_gradients():
    """Guards the new distributions' log densities against the textbook formulas and their
    gradients in the parameters (float64 gradcheck)."""
    D = pylucid.distributions
    v = pylucid.tensor([0.5, 2.0], dtype=pylucid.float64)
    np.testing.assert_allclose(D.Exponential(pylucid.tensor([2.0, 0.5], dtype=pylucid.float64)).log_prob(v).numpy(),
                               [np.log(2) - 1.0, np.log(0.5) - 1.0])
    np.testing.assert_allclose(D.Laplace(0.0, 2.0).log_prob(pylucid.tensor(1.0)).item(), -np.log(4) - 0.5, rtol=1e-6)
    np.testing.assert_allclose(D.LogNormal(0.0, 1.0).log_prob(pylucid.tensor(1.0)).item(), -0.5 * np.log(2 * np.pi),
                               rtol=1e-6)
    np.testing.assert_allclose(D.Geometric(0.25).log_prob(pylucid.tensor(2.0)).item(), np.log(0.75 ** 2 * 0.25),
                               rtol=1e-6)
    assert D.Geometric(0.25).mean.item() == 3.0 and repr(D.LogNormal(0.0, 1.0)) == "LogNormal()"
    with pytest.raises(ValueError):
        D.Exponential(-1.0)
    with pytest.raises(ValueError):
        D.Geometric(probs=0.5, logits=0.0)
    s = D.Exponential(3.0).sample((2000,))
    assert (s >= 0).all() and abs(s.mean().item() - 1 / 3) < 0.05
    r = pylucid.tensor([0.7, 1.3], dtype=pylucid.float64, requires_grad=True)
    loc = pylucid.tensor([0.1, -0.4], dtype=pylucid.float64, requires_grad=True)
    p = pylucid.tensor([0.3, 0.6], dtype=pylucid.float64, requires_grad=True)
    assert gradcheck(lambda r: D.Exponential(r).log_prob(v), (r,))
    assert gradcheck(lambda m, s: D.Laplace(m, s).log_prob(v), (loc, r))
    assert gradcheck(lambda m, s: D.Cauchy(m, s).log_prob(v) + D.Cauchy(m, s).cdf(v), (loc, r))
    np.testing.assert_allclose(D.Cauchy(0.0, 1.0).log_prob(pylucid.tensor(1.0)).item(), -np.log(2 * np.pi), rtol=1e-6)
    g = pylucid.empty(1000, dtype=pylucid.float64).geometric_(0.5)
    assert g.min().item() >= 1 and abs(g.mean().item() - 2.0) < 0.2
    assert gradcheck(lambda m, s: D.LogNormal(m, s).log_prob(v) + D.LogNormal(m, s).entropy(), (loc, r))
    assert gradcheck(lambda p: D.Geometric(p).log_prob(pylucid.tensor([0.0, 3.0], dtype=pylucid.float64))
                     + D.Geometric(p).entropy(), (p,))


def test_nn_buffer_registers_on_assignment():
    """Guards against `self.x = nn.Buffer(t, persistent=...)` (PyTorch 2.5+) not registering a
    buffer, or a non-persistent one landing in state_dict."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Buffer(pylucid.zeros(2))
            self.b = nn.Buffer(pylucid.ones(1), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["a", "b"] and list(m.state_dict()) == ["a"]
    assert type(m.a) is pylucid.Tensor and not m.a.requires_grad
    m.a = pylucid.ones(2)  # a plain tensor assigned to a buffer name replaces the buffer
    assert m.state_dict()["a"].tolist() == [1.0, 1.0]
    b = nn.Buffer(pylucid.ones(2, requires_grad=True))
    assert not b.requires_grad and b.persistent and repr(b) == "tensor([1., 1.])"
    with pytest.raises(TypeError):
        nn.Buffer([1.0])


def test_lazy_layers_materialise_on_the_first_forward():
    """Guards against nn.LazyLinear / LazyConv2d missing, drawing their initial weights at
    construction (PyTorch draws them at the first forward) or replacing the Parameter objects an
    optimizer already holds."""
    pylucid.manual_seed(0)
    lazy = nn.LazyLinear(3)
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=3, bias=True)" and lazy.has_uninitialized_params()
    w_obj = lazy.weight
    opt = pylucid.optim.SGD(lazy.parameters(), lr=0.1)
    y = lazy(pylucid.ones(2, 4))
    pylucid.manual_seed(0)
    eager = nn.Linear(4, 3)
    assert type(lazy) is nn.Linear and lazy.in_features == 4 and lazy.weight is w_obj
    assert pylucid.equal(lazy.weight, eager.weight) and pylucid.equal(lazy.bias, eager.bias)
    y.sum().backward()
    opt.step()
    assert not pylucid.equal(lazy.weight, eager.weight)
    conv = nn.LazyConv2d(4, 3, padding=1)
    assert repr(conv).startswith("LazyConv2d(0, 4, kernel_size=(3, 3)")
    assert conv(pylucid.ones(1, 2, 5, 5)).shape == (1, 4, 5, 5) and type(conv) is nn.Conv2d
    assert conv.weight.shape == (4, 2, 3, 3) and conv.in_channels == 2
    net = nn.Sequential(nn.LazyConv1d(2, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    assert net(pylucid.randn(3, 5, 7)).shape == (3, 2) and net[3].in_features == 10
    with pytest.raises(RuntimeError):
        nn.LazyConv2d(2, 3)(pylucid.ones(5))


def test_lazy_batch_norm_and_transposed_convs():
    """Guards against nn.LazyBatchNorm1d/2d/3d (the d2l ResNet/DenseNet chapters build with them),
    LazyConv3d and LazyConvTranspose1d/2d/3d missing, or materialising statistics or weights
    different from the eager layer's at the first forward."""
    bn = nn.LazyBatchNorm2d(momentum=0.2)
    assert repr(bn) == "LazyBatchNorm2d(0, eps=1e-05, momentum=0.2, affine=True, bias=True, track_running_stats=True)"
    assert bn.has_uninitialized_params()
    w_obj = bn.weight
    opt = pylucid.optim.SGD(bn.parameters(), lr=0.1)
    x = pylucid.randn(4, 3, 2, 2)
    y = bn(x)
    eager = nn.BatchNorm2d(3, momentum=0.2)
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3 and bn.weight is w_obj
    assert pylucid.allclose(y, eager(x)) and pylucid.allclose(bn.running_var, eager.running_var)
    assert list(bn.state_dict()) == list(eager.state_dict()) and int(bn.num_batches_tracked) == 1
    (y * x).sum().backward()
    opt.step()
    assert bn.weight.shape == (3,) and not pylucid.equal(bn.weight, eager.weight)
    plain = nn.LazyBatchNorm1d(affine=False)
    assert plain(pylucid.randn(5, 4)).shape == (5, 4) and plain.running_mean.shape == (4,) and plain.weight is None
    assert nn.LazyBatchNorm3d()(pylucid.randn(2, 2, 1, 2, 2)).shape == (2, 2, 1, 2, 2)
    for lazy_cls, eager_cls, shape in [(nn.LazyConvTranspose2d, nn.ConvTranspose2d, (1, 2, 5, 5)),
                                       (nn.LazyConvTranspose1d, nn.ConvTranspose1d, (2, 2, 5)),
                                       (nn.LazyConv3d, nn.Conv3d, (1, 2, 3, 3, 3))]:
        kw = dict(stride=2, output_padding=1) if "Transpose" in lazy_cls.__name__ else {}
        pylucid.manual_seed(1)
        m = lazy_cls(4, 3, **kw)
        assert repr(m).startswith(f"{lazy_cls.__name__}(0, 4, kernel_size=")
        out = m(pylucid.ones(*shape))
        pylucid.manual_seed(1)
        ref = eager_cls(2, 4, 3, **kw)
        assert type(m) is eager_cls and pylucid.equal(m.weight, ref.weight) and pylucid.equal(out, ref(pylucid.ones(*shape)))
    with pytest.raises(ValueError):
        nn.LazyBatchNorm2d()(pylucid.ones(3))


def test_factories_take_size_by_keyword():
    """Guards against torch.rand(size=(2,)) / zeros(size=...) being refused (PyTorch takes the
    shape by keyword too), and against unknown keywords being silently accepted."""
    pylucid.manual_seed(0)
    a = pylucid.rand(size=[2, 3])
    pylucid.manual_seed(0)
    assert pylucid.equal(a, pylucid.rand(2, 3))
    assert pylucid.randn(size=(3,)).shape == (3,) and pylucid.empty(size=(1, 2)).shape == (1, 2)
    assert pylucid.zeros(size=(2,)).tolist() == [0.0, 0.0] and pylucid.ones(size=[1, 1], dtype=pylucid.int64).tolist() == [[1]]
    with pytest.raises(TypeError, match="multiple values"):
        pylucid.zeros(2, size=(3,))
    with pytest.raises(TypeError, match="unexpected keyword"):
        pylucid.ones(2, bogus=1)
