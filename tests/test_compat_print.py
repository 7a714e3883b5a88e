"""What scripts print and the small keywords they pass: tensors print in PyTorch's format,
``Tensor.shape`` is a ``Size``, ``keepdims=``, ``out=``, ``torch.load(..., weights_only=)``,
f-strings of 0-d tensors, and ``linspace`` values equal to PyTorch's."""
import io
import pickle

import numpy as np
import pylucid
import pytest

try:
    import torch
except ImportError:  # the checks against PyTorch are skipped, the rest still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

# (constructor source, evaluated with `t` bound to pylucid or torch): the cases the formatter
# distinguishes (int mode, fixed, scientific, non-finite, summarised, wrapped, suffixes).
REPR_CASES = [
    "t.tensor(3.14159)", "t.tensor(2)", "t.tensor(True)", "t.tensor([1.0, 2.0, 3.0])",
    "t.tensor([1.5, -2.25, 3.125])", "t.tensor([1e-5, 1.0, 1e5])", "t.tensor([1e-10, 1e10])",
    "t.tensor([123456.0, 1.5])", "t.tensor([1e8, 1.0])", "t.tensor([1e9, 1.0])",
    "t.tensor([float('nan'), 1.0, float('inf'), -float('inf')])", "t.tensor([0.0, -0.0])",
    "t.tensor([[1, -2], [3, 40000]])", "t.tensor([True, False])", "t.arange(2000)",
    "t.arange(24.0).reshape(2, 3, 4) / 7", "t.arange(10000.0).reshape(100, 100) / 3",
    "t.ones(2, dtype=t.float64)", "t.ones(2, dtype=t.float16)", "t.ones(2, dtype=t.bfloat16)",
    "t.zeros(0)", "t.zeros(2, 0)", "t.arange(3.0).requires_grad_()", "t.tensor([[[1]]])",
    "t.eye(2, dtype=t.bool)", "t.tensor([1.0, 2.5e-3])", "t.tensor([100.0, 2.5])",
    "t.arange(60.0) * 1.5", "t.tensor([12345678.0])", "t.tensor(1e-20)",
]


@needs_torch
@pytest.mark.parametrize("src", REPR_CASES)
def test_repr_matches_torch(src):
    """Guards against a printed tensor differing from PyTorch's print of the same values (scripts
    print tensors, and their output is compared line by line)."""
    ours = repr(eval(src, {"t": pylucid}))
    theirs = repr(eval(src, {"t": torch})).replace("torch.", "pylucid.")
    assert ours == theirs


def test_repr_formats_without_torch():
    """Guards against the fixed, int, scientific and summarised formats drifting."""
    assert repr(pylucid.tensor([1.0, 2.5, -3.0])) == "tensor([ 1.0000,  2.5000, -3.0000])"
    assert repr(pylucid.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(pylucid.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(pylucid.tensor([[1, 2], [3, 40]])) == "tensor([[ 1,  2],\n        [ 3, 40]])"
    assert repr(pylucid.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(pylucid.zeros(2, 0)) == "tensor([], size=(2, 0))"
    assert repr(pylucid.ones(1, requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward0>)"


def test_set_printoptions_and_restore():
    """Guards against print options being ignored or leaking past printoptions()."""
    from pylucid._tensor_str import printoptions
    x = pylucid.tensor([1.12345, 2.0])
    with printoptions(precision=2):
        assert repr(x) == "tensor([1.12, 2.00])"
    assert repr(x) == "tensor([1.1235, 2.0000])"
    pylucid.set_printoptions(sci_mode=True)
    try:
        assert repr(pylucid.tensor([1.0])) == "tensor([1.0000e+00])"
    finally:
        pylucid.set_printoptions(profile="default")
    with pytest.raises(ValueError):
        pylucid.set_printoptions(profile="long")


def test_named_tuple_and_node_print_as_torch():
    """Guards against max(dim=)/sort results and grad_fn nodes printing differently from PyTorch."""
    r = pylucid.tensor([[1, 3], [4, 2]]).max(dim=1)
    assert repr(r) == "pylucid.return_types.max(\nvalues=tensor([3, 4]),\nindices=tensor([1, 0]))"
    assert repr(pylucid.tensor([2.0, 1.0]).sort()).startswith("pylucid.return_types.sort(\nvalues=")
    node = (pylucid.ones(1, requires_grad=True) + 1).grad_fn
    assert repr(node).startswith("<AddBackward0 object at 0x")


def test_public_classes_print_under_the_package():
    """Guards against print(type(x)) showing ``<class 'pylucid._C.Tensor'>`` where PyTorch prints
    ``<class 'torch.Tensor'>`` (and the same for dtype, Size and device), and against pickle no
    longer finding the classes under their public names."""
    x = pylucid.ones(2)
    for obj, name in [(x, "Tensor"), (x.dtype, "dtype"), (x.shape, "Size"), (pylucid.device("cpu"), "device")]:
        assert str(type(obj)) == f"<class 'pylucid.{name}'>"
        assert pickle.loads(pickle.dumps(type(obj))) is type(obj) and getattr(pylucid, name) is type(obj)
    assert pickle.loads(pickle.dumps(pylucid.float64)) is pylucid.float64
    assert pylucid.equal(pickle.loads(pickle.dumps(x)), x)


def test_clamp_node_prints_the_scalar_overload():
    """Guards against ``x.clamp(min=0)`` printing ``grad_fn=<ClampBackward0>`` where PyTorch
    prints ``ClampBackward1`` (clamp with number bounds is its overload 1)."""
    x = pylucid.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    assert repr(x.clamp(min=0)).endswith("grad_fn=<ClampBackward1>)")
    assert repr(x.clip(0, 1).grad_fn).startswith("<ClampBackward1 object at 0x")



def test_builtin_ops_written_as_functions_print_torch_node_names():
    """Guards against ops pylucid implements as autograd Functions (linalg decompositions,
    ctc_loss, scatter_reduce, erfinv) printing ``grad_fn=<pylucid.autograd.function.CholeskyBackward
    ...>`` as a user's Function would, where PyTorch prints its built-in node
    (``LinalgCholeskyExBackward0``); a user's Function keeps PyTorch's custom-Function print."""
    A = pylucid.tensor([[2.0, 0.5], [0.5, 1.0]], requires_grad=True)
    t = pylucid.tensor([0.1, -0.3], requires_grad=True)
    cases = [
        (pylucid.linalg.cholesky(A), "LinalgCholeskyExBackward0"),
        (pylucid.linalg.eigh(A)[0], "LinalgEighBackward0"),
        (pylucid.linalg.svd(A)[1], "LinalgSvdBackward0"),
        (pylucid.linalg.qr(A)[0], "LinalgQrBackward0"),
        (pylucid.linalg.pinv(A), "LinalgPinvBackward0"),
        (pylucid.linalg.inv(A), "LinalgInvExBackward0"),
        (pylucid.linalg.det(A), "LinalgDetBackward0"),
        (pylucid.linalg.slogdet(A)[1], "LinalgSlogdetBackward0"),
        (pylucid.linalg.solve(A, t[:, None]), "LinalgSolveExBackward0"),
        (pylucid.erfinv(t), "ErfinvBackward0"),
        (pylucid.zeros(2).scatter_reduce(0, pylucid.tensor([1, 1]), t, "amax"), "ScatterReduceBackward0"),
        (pylucid.nn.functional.ctc_loss(pylucid.randn(4, 1, 3, requires_grad=True).log_softmax(2), pylucid.tensor([[1, 2]]), [4], [2],
                    reduction="none"), "CtcLossBackward0"),
    ]
    for out, name in cases:
        assert repr(out).endswith(f"grad_fn=<{name}>)"), repr(out)
        assert repr(out.grad_fn).startswith(f"<{name} object at 0x")

    class MyExp(pylucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            return g

    assert repr(MyExp.apply(t).grad_fn).startswith("<pylucid.autograd.function.MyExpBackward object at 0x")

def test_slogdet_and_frexp_print_as_named_tuples():
    """Guards against slogdet/frexp printing as plain namedtuples on one line (PyTorch prints
    ``torch.return_types.slogdet(`` then a field per line) and against linalg.slogdet carrying
    the top-level name (PyTorch's is ``linalg_slogdet``)."""
    S = 2 * pylucid.eye(2)
    assert repr(pylucid.slogdet(S)) == "pylucid.return_types.slogdet(\nsign=tensor(1.),\nlogabsdet=tensor(1.3863))"
    assert repr(S.slogdet()).startswith("pylucid.return_types.slogdet(\n")
    r = pylucid.linalg.slogdet(S)
    assert type(r).__name__ == "linalg_slogdet" and repr(r).startswith("pylucid.return_types.linalg_slogdet(\nsign=")
    assert r.logabsdet.item() == pytest.approx(1.3862944) and pylucid.logdet(S).item() == pytest.approx(1.3862944)
    assert repr(pylucid.frexp(pylucid.tensor([8.0]))).startswith("pylucid.return_types.frexp(\nmantissa=tensor([0.5000]),")
    # linalg.solve_ex printed as a plain namedtuple on one line
    assert repr(pylucid.linalg.solve_ex(S, pylucid.ones(2, 1))) == (
        "pylucid.return_types.linalg_solve_ex(\nresult=tensor([[0.5000],\n        [0.5000]]),\ninfo=tensor(0))")


def test_version_module_for_environment_checks():
    """Guards against ``print(torch.__version__, torch.version.cuda)`` (the first cell of many
    notebooks) stopping on a missing ``version`` module: cuda/hip are None as in a CPU build."""
    assert pylucid.version.cuda is None and pylucid.version.hip is None and pylucid.version.debug is False
    assert pylucid.version.__version__ == pylucid.__version__ and pylucid.__version__.count(".") == 2


def test_shape_is_a_size():
    """Guards against Tensor.shape being a plain tuple (scripts print it as torch.Size([..]))."""
    x = pylucid.zeros(2, 3, 4)
    s = x.shape
    assert isinstance(s, pylucid.Size) and isinstance(s, tuple)
    assert s == (2, 3, 4) and x.size() == s and x.size(1) == 3
    assert repr(s) == "pylucid.Size([2, 3, 4])" and str(pylucid.zeros(()).shape) == "pylucid.Size([])"
    assert isinstance(s[1:], pylucid.Size) and s[1:] == (3, 4) and isinstance(s[0], int)
    assert isinstance(s + (5,), pylucid.Size) and isinstance((1,) + s, pylucid.Size)
    assert s.numel() == 24 and hash(s) == hash((2, 3, 4))
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is pylucid.Size
    assert pylucid.zeros(s).shape == s and pylucid.ones(*s).shape == s and x.view(s[::-1]).shape == (4, 3, 2)


@pytest.mark.parametrize("name", ["sum", "mean", "std", "var", "prod", "amax", "amin", "argmax", "argmin",
                                  "logsumexp", "max", "min"])
def test_keepdims_alias(name):
    """Guards against numpy's keepdims= spelling (which PyTorch accepts) raising a TypeError."""
    x = pylucid.arange(1.0, 7.0).reshape(2, 3)
    r = getattr(pylucid, name)(x, 1, keepdims=True)
    r = r[0] if isinstance(r, tuple) else r
    assert r.shape == (2, 1)
    m = getattr(x, name)(1, keepdims=True)
    m = m[0] if isinstance(m, tuple) else m
    assert m.shape == (2, 1)
    assert getattr(x, name)(1, keepdims=False).__class__ is not None


def test_out_keyword_writes_into_the_tensor():
    """Guards against torch.add(x, y, out=r) / torch.matmul(a, b, out=c) being refused."""
    x, y = pylucid.ones(2, 3), pylucid.full((2, 3), 2.0)
    r = pylucid.empty(2, 3)
    assert pylucid.add(x, y, out=r) is r and r.tolist() == [[3.0] * 3] * 2
    c = pylucid.empty(0)
    pylucid.matmul(x, y.T, out=c)
    assert c.shape == (2, 2) and c.tolist() == [[6.0, 6.0], [6.0, 6.0]]
    m = pylucid.zeros(2, 3)
    pylucid.mul(x, 5, out=m)
    assert m.tolist() == [[5.0] * 3] * 2
    b = pylucid.empty(4, 3)
    pylucid.cat([x, y], out=b)
    assert b[2:].tolist() == [[2.0] * 3] * 2
    w = pylucid.ones(2, requires_grad=True)
    with pytest.raises(pylucid.LucidError, match="out="):
        pylucid.mul(w, 2, out=pylucid.empty(2))
    with pytest.raises(TypeError):
        pylucid.exp(x, out=[1, 2])


def test_load_accepts_torch_keywords():
    """Guards against torch.load(f, map_location=..., weights_only=True) raising a TypeError."""
    buf = io.BytesIO()
    pylucid.save({"w": pylucid.arange(3.0)}, buf)
    for kw in ({"weights_only": True}, {"map_location": "cpu"}, {"map_location": pylucid.device("cpu")},
               {"map_location": lambda s, loc: s}):
        buf.seek(0)
        assert pylucid.load(buf, **kw)["w"].tolist() == [0.0, 1.0, 2.0]
    buf.seek(0)
    with pytest.raises(pylucid.LucidError, match="cuda"):
        pylucid.load(buf, map_location="cuda")


def test_format_of_zero_dim_tensor_is_the_number():
    """Guards against f"{loss}" printing tensor(...) where PyTorch prints the float."""
    v = pylucid.tensor(2.5) / 3
    assert f"{v}" == f"{v.item()}" and f"{v:.3f}" == "0.833"
    assert f"{pylucid.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    assert "{:>6}".format(pylucid.tensor(3)) == "     3"


@needs_torch
@pytest.mark.parametrize("args", [(-1, 1, 7), (0, 1, 100), (-3.14159, 3.14159, 2000), (3, -7, 5001), (0.1, 7.3, 333)])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_linspace_bit_identical_to_torch(args, dt):
    """Guards against linspace values differing from PyTorch's in the last bit (the polynomial
    fitting tutorial's losses then drift)."""
    ours = pylucid.linspace(*args, dtype=getattr(pylucid, dt)).numpy()
    theirs = torch.linspace(*args, dtype=getattr(torch, dt)).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_linspace_ends_exact():
    """Guards against the last point missing `end` (the fill runs from both ends)."""
    x = pylucid.linspace(-3.0, 7.0, 1001)
    assert x[0].item() == -3.0 and x[-1].item() == 7.0 and x.shape == (1001,)


def test_node_classes_are_named_as_torch():
    """Guards against type(y.grad_fn) being the bare Node class: graph-walking scripts (torchviz's
    make_dot) label nodes with type(fn).__name__, and print(type(fn)) shows <class 'MulBackward0'>."""
    x = pylucid.ones(2, 3, requires_grad=True)
    y = (x * 2).exp().sum()
    names = []
    fn = y.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        assert isinstance(fn, pylucid.autograd.graph.Node)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    assert names == ["SumBackward0", "ExpBackward0", "MulBackward0", "AccumulateGrad"]
    assert str(type(y.grad_fn)) == "<class 'SumBackward0'>"
    assert y.grad_fn is y.grad_fn and type(y.grad_fn).__name__ in repr(y.grad_fn)
    assert type(x.max(1).values.grad_fn).__name__ == "MaxBackward0"  # its own class, kept
    y.backward()  # a renamed node still runs and frees as before
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2.0) * np.ones((2, 3)))


def test_node_class_names_match_torch():
    torch = pytest.importorskip("torch")

    def walk(lib):
        a = lib.ones(3, 4, requires_grad=True)
        b = lib.ones(4, 2, requires_grad=True)
        out = ((a @ b).relu() - 1).tanh().mean()
        seen, fn = [], out.grad_fn
        while fn is not None:
            seen.append(type(fn).__name__)
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return seen

    assert walk(pylucid) == walk(torch)
