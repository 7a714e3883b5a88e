"""nn layers, containers, losses and nn.init: forward against numpy, initialisation statistics,
registration, repr, state_dict strictness."""
import math

import numpy as np
import pylucid
import pytest
from pylucid import nn
from pylucid.nn import init

RNG = np.random.default_rng(1)


def arr(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def t64(a, requires_grad=False):
    t = pylucid.tensor(np.asarray(a, dtype=np.float64), dtype=pylucid.float64)
    return t.requires_grad_(True) if requires_grad else t


def np_of(t):
    return np.asarray(t.detach().double())


# ---- Linear ---------------------------------------------------------------------------------


def test_linear_forward_matches_numpy():
    """Guards against a transposed weight or a bias added on the wrong axis."""
    lin = nn.Linear(3, 5).double()
    x = arr(4, 2, 3)
    y = lin(t64(x))
    ref = x @ np_of(lin.weight).T + np_of(lin.bias)
    np.testing.assert_allclose(np_of(y), ref, rtol=1e-12, atol=1e-12)
    assert y.shape == (4, 2, 5)


def test_linear_without_bias_and_gradients():
    """Guards against a bias=False layer still registering a parameter, and checks the
    layer's gradient in float64 against finite differences."""
    lin = nn.Linear(3, 2, bias=False).double()
    assert lin.bias is None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    x = t64(arr(4, 3), requires_grad=True)
    assert pylucid.autograd.gradcheck(lambda a, w: pylucid.linear(a, w), [x, lin.weight])
    np.testing.assert_allclose(np_of(lin(x)), np_of(x) @ np_of(lin.weight).T, rtol=1e-12)


def test_linear_init_follows_pytorch_bounds_and_seed():
    """Guards against an init whose scale ignores fan_in (PyTorch: U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) for weight and bias) and against init not drawing from manual_seed."""
    pylucid.manual_seed(3)
    a = nn.Linear(64, 300)
    pylucid.manual_seed(3)
    b = nn.Linear(64, 300)
    np.testing.assert_array_equal(np_of(a.weight), np_of(b.weight))
    bound = 1 / math.sqrt(64)
    w = np_of(a.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # std of U(-b, b) = b / sqrt(3)
    assert np.abs(np_of(a.bias)).max() <= bound
    assert a.weight.requires_grad and a.weight.is_leaf


def test_linear_repr_and_argument_errors():
    """Guards against an unreadable repr and against silently accepting bad sizes."""
    assert repr(nn.Linear(2, 32)) == "Linear(in_features=2, out_features=32, bias=True)"
    assert repr(nn.Linear(2, 3, bias=False)) == "Linear(in_features=2, out_features=3, bias=False)"
    with pytest.raises(pylucid.LucidError, match="in_features"):
        nn.Linear(-1, 3)
    with pytest.raises(TypeError, match="in_features"):  # a float size: PyTorch's TypeError
        nn.Linear(2.5, 3)
    with pytest.raises(TypeError, match="num_embeddings"):
        nn.Embedding(2.5, 3)
    with pytest.raises(pylucid.ShapeMismatch):
        nn.Linear(3, 2)(pylucid.ones(4, 5))


def test_linear_size_zero():
    """Guards against a division by zero in the init bound of a layer with no inputs."""
    lin = nn.Linear(0, 3)
    assert lin(pylucid.ones(2, 0)).shape == (2, 3)


# ---- Embedding --------------------------------------------------------------------------------


def test_embedding_lookup_and_padding():
    """Guards against off-by-one row lookups and a padding row that trains."""
    emb = nn.Embedding(10, 4, padding_idx=2).double()
    assert np.all(np_of(emb.weight)[2] == 0)
    idx = np.array([[1, 2, 9], [2, 0, 1]])
    out = emb(pylucid.tensor(idx))
    np.testing.assert_array_equal(np_of(out), np_of(emb.weight)[idx])
    out.sum().backward()
    g = np_of(emb.weight.grad)
    assert np.all(g[2] == 0)
    np.testing.assert_array_equal(g[1], np.full(4, 2.0))  # row 1 used twice
    assert repr(emb) == "Embedding(10, 4, padding_idx=2)"


def test_embedding_init_is_standard_normal():
    """Guards against a small-scale init (PyTorch's Embedding is N(0, 1))."""
    w = np_of(nn.Embedding(200, 100).weight)
    assert abs(w.mean()) < 0.03 and abs(w.std() - 1) < 0.03


def test_embedding_negative_padding_and_from_pretrained():
    """Guards against a negative padding_idx not being wrapped and from_pretrained copying."""
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    with pytest.raises(pylucid.IndexOutOfRange):
        nn.Embedding(5, 2, padding_idx=5)
    table = pylucid.arange(6.0).reshape(3, 2)
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    assert emb(pylucid.tensor([2])).tolist() == [[4.0, 5.0]]


# ---- activations --------------------------------------------------------------------------------

_ERF = np.vectorize(math.erf)

ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _ERF(x / math.sqrt(2)))),
    (nn.GELU(approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Identity(), lambda x: x),
]


@pytest.mark.parametrize("module,ref", ACTIVATIONS, ids=lambda v: repr(v) if isinstance(v, nn.Module) else "")
def test_activation_forward_and_grad(module, ref):
    """Guards against an activation module wired to the wrong op or dropping its option."""
    x = arr(3, 5, scale=2.0)
    np.testing.assert_allclose(np_of(module(t64(x))), ref(x), rtol=1e-10, atol=1e-12)
    assert pylucid.autograd.gradcheck(module, [t64(arr(2, 3), requires_grad=True)])


def test_softmax_modules_match_numpy():
    """Guards against Softmax/LogSoftmax normalising over the wrong dim."""
    x = arr(2, 3, 4)
    for dim in (0, 1, -1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        ref = e / e.sum(axis=dim, keepdims=True)
        np.testing.assert_allclose(np_of(nn.Softmax(dim)(t64(x))), ref, rtol=1e-12)
        np.testing.assert_allclose(np_of(nn.LogSoftmax(dim=dim)(t64(x))), np.log(ref), rtol=1e-10, atol=1e-12)
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"


def test_relu_inplace_and_gelu_option_errors():
    """Guards against inplace=True allocating a copy and a typo'd approximate accepted."""
    x = pylucid.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    with pytest.raises(pylucid.LucidError, match="approximate"):
        nn.GELU(approximate="fast")
    assert repr(nn.GELU()) == "GELU(approximate='none')"


def test_flatten_and_identity():
    """Guards against Flatten merging the batch dim by default."""
    x = pylucid.ones(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Identity(7, foo=1)(x) is x


# ---- Dropout ----------------------------------------------------------------------------------


def test_dropout_train_and_eval():
    """Guards against dropout applied in eval mode, or kept values not rescaled by 1/(1-p)."""
    drop = nn.Dropout(0.25)
    x = pylucid.ones(200, 100)
    y = np_of(drop(x))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    drop.eval()
    assert np.array_equal(np_of(drop(x)), np_of(x))
    assert repr(drop) == "Dropout(p=0.25, inplace=False)"
    with pytest.raises(pylucid.LucidError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_follows_seed():
    """Guards against dropout masks not drawn from pylucid.manual_seed (irreproducible runs)."""
    pylucid.manual_seed(5)
    a = np_of(nn.Dropout(0.5)(pylucid.ones(64)))
    pylucid.manual_seed(5)
    b = np_of(nn.Dropout(0.5)(pylucid.ones(64)))
    np.testing.assert_array_equal(a, b)


# ---- containers ------------------------------------------------------------------------------


def test_sequential_chains_and_registers():
    """Guards against a Sequential that forgets to register its children's parameters."""
    net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 3)).double()
    assert list(net.state_dict().keys()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    x = arr(5, 2)
    h = np.maximum(x @ np_of(net[0].weight).T + np_of(net[0].bias), 0)
    ref = h @ np_of(net[2].weight).T + np_of(net[2].bias)
    np.testing.assert_allclose(np_of(net(t64(x))), ref, rtol=1e-12)
    assert len(net) == 3 and isinstance(net[-1], nn.Linear)
    assert isinstance(net[:2], nn.Sequential) and len(net[:2]) == 2
    assert "(1): ReLU()" in repr(net)


def test_sequential_edit_operations():
    """Guards against indices that go stale after deleting or inserting a layer."""
    net = nn.Sequential(nn.Identity(), nn.ReLU(), nn.Tanh())
    del net[0]
    assert [type(m).__name__ for m in net] == ["ReLU", "Tanh"]
    assert list(net._modules) == ["0", "1"]
    net.insert(1, nn.Sigmoid())
    net.append(nn.Identity())
    assert [type(m).__name__ for m in net] == ["ReLU", "Sigmoid", "Tanh", "Identity"]
    net[0] = nn.SiLU()
    assert isinstance(net[0], nn.SiLU)
    with pytest.raises(pylucid.IndexOutOfRange):
        net[10]
    with pytest.raises(pylucid.DtypeMismatch):
        net.append(3)
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"] and isinstance(named.act, nn.ReLU)


def test_module_list_and_dict():
    """Guards against ModuleList/ModuleDict members missing from parameters() and state_dict."""
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(list(layers.parameters())) == 6
    layers.append(nn.Linear(2, 1))
    layers.extend([nn.ReLU()])
    assert len(layers) == 5 and isinstance(layers[-2], nn.Linear)
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    assert isinstance(layers[1:], nn.ModuleList)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 3)})

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.heads["b"](x)

    net = Net()
    assert "heads.b.weight" in net.state_dict() and "blocks.1.bias" in net.state_dict()
    assert net(pylucid.ones(4, 2)).shape == (4, 3)
    assert list(net.heads.keys()) == ["a", "b"] and "a" in net.heads
    popped = net.heads.pop("a")
    assert isinstance(popped, nn.Linear) and list(net.heads) == ["b"]
    with pytest.raises(KeyError):
        net.heads["zzz"]
    with pytest.raises(pylucid.LucidError, match="no forward"):
        net.blocks(pylucid.ones(1))


# ---- losses ----------------------------------------------------------------------------------


def _log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def test_cross_entropy_loss_module_options():
    """Guards against CrossEntropyLoss dropping weight / ignore_index / reduction."""
    x = arr(6, 4)
    y = np.array([0, 3, 1, 1, 2, 3])
    w = np.array([1.0, 2.0, 0.5, 1.5])
    lp = _log_softmax(x)
    nll = -lp[np.arange(6), y]
    mask = y != 1
    loss = nn.CrossEntropyLoss(weight=t64(w), ignore_index=1)(t64(x), pylucid.tensor(y))
    ref = (w[y] * nll)[mask].sum() / w[y][mask].sum()
    np.testing.assert_allclose(loss.item(), ref, rtol=1e-12)
    none = nn.CrossEntropyLoss(reduction="none")(t64(x), pylucid.tensor(y))
    np.testing.assert_allclose(np_of(none), nll, rtol=1e-12)
    s = nn.CrossEntropyLoss(reduction="sum")(t64(x), pylucid.tensor(y))
    np.testing.assert_allclose(s.item(), nll.sum(), rtol=1e-12)
    with pytest.raises(pylucid.LucidError, match="reduction"):
        nn.CrossEntropyLoss(reduction="avg")


def test_cross_entropy_label_smoothing_against_torch():
    """Guards against label smoothing mixing the uniform term with the wrong normalisation."""
    torch = pytest.importorskip("torch")
    x = arr(5, 3)
    y = np.array([0, 2, 1, 2, 0])
    w = np.array([0.2, 1.0, 3.0])
    ours = nn.CrossEntropyLoss(weight=t64(w), label_smoothing=0.1)(t64(x), pylucid.tensor(y))
    ref = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1)(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(ours.item(), ref.item(), rtol=1e-10)


def test_nll_mse_bce_modules():
    """Guards against the loss modules passing options positionally in the wrong order."""
    x = arr(4, 3)
    y = np.array([2, 0, 1, 2])
    lp = _log_softmax(x)
    np.testing.assert_allclose(nn.NLLLoss()(t64(lp), pylucid.tensor(y)).item(), -lp[np.arange(4), y].mean(),
                               rtol=1e-12)
    a, b = arr(3, 2), arr(3, 2)
    np.testing.assert_allclose(nn.MSELoss()(t64(a), t64(b)).item(), ((a - b) ** 2).mean(), rtol=1e-12)
    np.testing.assert_allclose(nn.MSELoss(reduction="sum")(t64(a), t64(b)).item(), ((a - b) ** 2).sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.L1Loss()(t64(a), t64(b)).item(), np.abs(a - b).mean(), rtol=1e-12)
    z = arr(4, 3)
    tgt = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float64)
    pw = np.array([1.0, 2.0, 0.5])
    sig = 1 / (1 + np.exp(-z))
    ref = -(pw * tgt * np.log(sig) + (1 - tgt) * np.log(1 - sig)).mean()
    got = nn.BCEWithLogitsLoss(pos_weight=t64(pw))(t64(z), t64(tgt))
    np.testing.assert_allclose(got.item(), ref, rtol=1e-10)


def test_loss_weights_are_buffers():
    """Guards against class weights that don't follow .to(dtype) or appear as parameters."""
    ce = nn.CrossEntropyLoss(weight=pylucid.ones(3))
    assert list(ce.state_dict()) == ["weight"] and list(ce.parameters()) == []
    ce.double()
    assert ce.weight.dtype == pylucid.float64
    # PyTorch's losses print no options.
    assert repr(nn.CrossEntropyLoss(reduction="sum", label_smoothing=0.1)) == "CrossEntropyLoss()"


# ---- nn.init -----------------------------------------------------------------------------------


def test_calculate_gain_table():
    """Guards against a wrong gain (e.g. tanh 5/3, leaky_relu with its slope)."""
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    with pytest.raises(pylucid.LucidError, match="unsupported nonlinearity"):
        init.calculate_gain("swishy")


@pytest.mark.parametrize("fn,kind,expected_std", [
    (lambda t: init.kaiming_uniform_(t, nonlinearity="relu"), "uniform", math.sqrt(2 / 100)),
    (lambda t: init.kaiming_normal_(t, nonlinearity="relu"), "normal", math.sqrt(2 / 100)),
    (lambda t: init.kaiming_normal_(t, mode="fan_out"), "normal", math.sqrt(2 / 1.0001) / math.sqrt(400)),
    (lambda t: init.xavier_uniform_(t), "uniform", math.sqrt(2 / 500)),
    (lambda t: init.xavier_normal_(t, gain=2.0), "normal", 2 * math.sqrt(2 / 500)),
    (lambda t: init.normal_(t, 0.5, 0.2), "normal", 0.2),
    (lambda t: init.uniform_(t, -3, 3), "uniform", 3 / math.sqrt(3)),
])
def test_init_distributions(fn, kind, expected_std):
    """Guards against swapped fan_in/fan_out or a missing sqrt(3) in uniform bounds."""
    t = pylucid.empty(400, 100)
    out = fn(t)
    assert out is t
    a = np_of(t)
    assert abs(a.std() - expected_std) < 0.02 * expected_std
    if kind == "uniform":
        assert np.abs(a).max() <= math.sqrt(3) * expected_std * 1.0001


def test_init_constant_family_and_no_grad():
    """Guards against init failing on a parameter (in-place on a leaf that requires grad) or
    recording a graph."""
    p = nn.Parameter(pylucid.empty(3, 2))
    init.ones_(p)
    assert p.tolist() == [[1.0, 1.0]] * 3 and p.grad_fn is None and p.is_leaf
    init.zeros_(p)
    assert p.tolist() == [[0.0, 0.0]] * 3
    init.constant_(p, 2.5)
    assert p.tolist() == [[2.5, 2.5]] * 3
    init.eye_(p)
    assert p.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    with pytest.raises(pylucid.ShapeMismatch, match="fewer than 2 dimensions"):
        init.xavier_uniform_(pylucid.empty(4))
    with pytest.raises(pylucid.LucidError, match="fan_in, fan_out"):
        init.kaiming_uniform_(pylucid.empty(4, 4), mode="fan_avg")


def test_init_is_seeded():
    """Guards against init drawing from an unseeded source."""
    pylucid.manual_seed(11)
    a = np_of(init.normal_(pylucid.empty(8)))
    pylucid.manual_seed(11)
    b = np_of(init.normal_(pylucid.empty(8)))
    np.testing.assert_array_equal(a, b)


# ---- state_dict strictness through the layers ---------------------------------------------------


def test_load_state_dict_strict_errors():
    """Guards against load_state_dict silently accepting a checkpoint of another model."""
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    sd = net.state_dict()
    other = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    other.load_state_dict(sd)
    np.testing.assert_array_equal(np_of(other[2].weight), np_of(net[2].weight))

    missing = dict(sd)
    del missing["2.bias"]
    with pytest.raises(pylucid.LucidError, match=r'Missing key\(s\) in state_dict: "2.bias"'):
        other.load_state_dict(missing)
    extra = dict(sd, **{"3.weight": pylucid.ones(1)})
    with pytest.raises(pylucid.LucidError, match=r'Unexpected key\(s\) in state_dict: "3.weight"'):
        other.load_state_dict(extra)
    assert other.load_state_dict(extra, strict=False) == ([], ["3.weight"])
    bad = dict(sd, **{"0.weight": pylucid.ones(3, 5)})
    with pytest.raises(pylucid.ShapeMismatch, match="0.weight"):
        other.load_state_dict(bad)
