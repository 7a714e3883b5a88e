"""batch_norm / group_norm / instance_norm and their layers: forward against numpy composites,
float64 gradcheck and gradgradcheck (training and eval), running statistics and momentum
(incl. None), state_dict keys, typed errors naming the layer, and parity with PyTorch."""
import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid.nn import functional as F

RNG = np.random.default_rng(13)


def ref_batch_norm(x, w=None, b=None, mean=None, var=None, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if mean is None:
        mean, var = x.mean(axes), x.var(axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def ref_group_norm(x, G, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    xg = x.reshape(n, G, -1)
    y = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 2, 3)])
def test_batch_norm_training_gradcheck(shape):
    """Guards against a wrong closed-form backward through the batch statistics (dx), the
    weight and bias gradients, and a double backward that forgets the statistics' path."""
    check_op(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
             lambda x, w, b: ref_batch_norm(x, w, b), [shape, (3,), (3,)])
    check_op(lambda x: F.batch_norm(x, None, None, training=True), lambda x: ref_batch_norm(x), [shape])


def test_batch_norm_eval_gradcheck():
    """Guards against eval mode differentiating through the (constant) running statistics."""
    rm, rv = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3)
    check_op(lambda x, w, b: F.batch_norm(x, pylucid.tensor(rm), pylucid.tensor(rv), w, b, training=False),
             lambda x, w, b: ref_batch_norm(x, w, b, rm, rv), [(4, 3, 2), (3,), (3,)])


@pytest.mark.parametrize("shape,G", [((3, 4), 2), ((2, 6, 5), 3), ((2, 4, 2, 3), 1), ((2, 4, 3), 4)])
def test_group_norm_gradcheck(shape, G):
    """Guards against groups taken across samples, a wrong channel-to-group map for the affine
    part, and a wrong per-group closed-form backward."""
    C = shape[1]
    check_op(lambda x, w, b: F.group_norm(x, G, w, b), lambda x, w, b: ref_group_norm(x, G, w, b),
             [shape, (C,), (C,)])
    check_op(lambda x: F.group_norm(x, G), lambda x: ref_group_norm(x, G), [shape])


def test_instance_norm_is_group_norm_per_channel():
    """Guards against instance_norm normalising over channels instead of per channel."""
    check_op(lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
             lambda x, w, b: ref_group_norm(x, 3, w, b), [(2, 3, 4), (3,), (3,)])


def test_running_stats_momentum_and_none():
    """Guards against the biased variance leaking into running_var, momentum weighting the old
    value, and momentum=None not being a cumulative average over num_batches_tracked."""
    xs = [RNG.standard_normal((6, 2, 3)) for _ in range(3)]
    bn = pylucid.nn.BatchNorm1d(2, momentum=0.3).double()
    cum = pylucid.nn.BatchNorm1d(2, momentum=None).double()
    rm, rv = np.zeros(2), np.ones(2)
    for x in xs:
        bn(pylucid.tensor(x))
        cum(pylucid.tensor(x))
        rm = 0.7 * rm + 0.3 * x.mean((0, 2))
        rv = 0.7 * rv + 0.3 * x.var((0, 2), ddof=1)
    np.testing.assert_allclose(np.asarray(bn.running_mean), rm, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(bn.running_var), rv, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cum.running_mean), np.mean([x.mean((0, 2)) for x in xs], 0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cum.running_var), np.mean([x.var((0, 2), ddof=1) for x in xs], 0),
                               rtol=1e-12)
    assert int(bn.num_batches_tracked) == 3 and bn.num_batches_tracked.dtype == pylucid.int64
    bn.eval()
    x = RNG.standard_normal((2, 2, 3))
    np.testing.assert_allclose(np.asarray(bn(pylucid.tensor(x))), ref_batch_norm(x, mean=rm, var=rv), rtol=1e-10)


def test_state_dict_keys_and_flags():
    """Guards against buffers missing from (or extra in) the state dict for each flag setting."""
    assert list(pylucid.nn.BatchNorm2d(3).state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                                            "num_batches_tracked"]
    assert list(pylucid.nn.BatchNorm1d(3, affine=False, track_running_stats=False).state_dict()) == []
    assert list(pylucid.nn.InstanceNorm2d(3).state_dict()) == []
    assert list(pylucid.nn.GroupNorm(1, 3, affine=False).state_dict()) == []
    assert pylucid.nn.BatchNorm1d(3, bias=False).bias is None
    no_track = pylucid.nn.BatchNorm1d(2, track_running_stats=False).eval()
    x = RNG.standard_normal((4, 2))
    np.testing.assert_allclose(np.asarray(no_track(pylucid.tensor(x).float())), ref_batch_norm(x), atol=1e-5)


def test_empty_batch_and_single_value():
    """Guards against an empty batch touching the running statistics or crashing, and a single
    value per channel in training passing silently (PyTorch raises ValueError)."""
    bn = pylucid.nn.BatchNorm1d(3)
    assert bn(pylucid.zeros(0, 3)).shape == (0, 3)
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0] and bn.running_var.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(pylucid.randn(1, 3))
    assert pylucid.nn.GroupNorm(1, 3)(pylucid.zeros(0, 3, 2)).shape == (0, 3, 2)


@pytest.mark.parametrize("make,x,match", [
    (lambda: pylucid.nn.BatchNorm1d(3), (2, 4), r"BatchNorm1d: expected input with 3 channels"),
    (lambda: pylucid.nn.BatchNorm2d(3), (2, 3, 4), r"BatchNorm2d: expected 4D input, got 3D"),
    (lambda: pylucid.nn.BatchNorm1d(3), (2, 3, 4, 5), r"BatchNorm1d: expected 2D or 3D input"),
    (lambda: pylucid.nn.GroupNorm(2, 4), (2, 3, 4), r"GroupNorm: expected input with 4 channels"),
    (lambda: pylucid.nn.InstanceNorm1d(3, affine=True), (2, 4, 5), r"InstanceNorm1d: expected input with 3"),
])
def test_layer_errors_name_the_layer(make, x, match):
    """Guards against a wrong input reaching a kernel or raising an error without the layer."""
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        make()(pylucid.randn(*x))


def test_functional_errors():
    """Guards against bad per-channel shapes, an indivisible group count and eval without running
    statistics being accepted."""
    x = pylucid.randn(2, 3, 4)
    with pytest.raises(pylucid.ShapeMismatch, match=r"batch_norm: weight shape \[2\] does not match"):
        F.batch_norm(x, None, None, pylucid.ones(2), training=True)
    with pytest.raises(pylucid.LucidError, match="required when training=False"):
        F.batch_norm(x, None, None)
    with pytest.raises(pylucid.ShapeMismatch, match="divisible by num_groups"):
        F.group_norm(x, 2)
    with pytest.raises(pylucid.ShapeMismatch, match="num_channels \\(3\\) must be divisible"):
        pylucid.nn.GroupNorm(2, 3)
    with pytest.raises(pylucid.DtypeMismatch, match="floating input"):
        F.group_norm(pylucid.tensor([[1, 2]]), 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_matches_torch_training_steps(dtype):
    """Guards against any difference from PyTorch in outputs, all gradients and running stats
    over training steps with momentum None and 0.1, then in eval."""
    torch = pytest.importorskip("torch")
    tdt, pdt = getattr(torch, dtype), getattr(pylucid, dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for momentum, shape, cls in [(None, (4, 3, 5), "BatchNorm1d"), (0.1, (3, 3, 4, 2), "BatchNorm2d")]:
        tm = getattr(torch.nn, cls)(3, momentum=momentum).to(tdt)
        pm = getattr(pylucid.nn, cls)(3, momentum=momentum).to(pdt)
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1, 1)
        pm.load_state_dict({k: pylucid.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
        for step in range(3):
            x, g = RNG.standard_normal(shape) + step, RNG.standard_normal(shape)
            tx = torch.tensor(x, dtype=tdt, requires_grad=True)
            px = pylucid.tensor(x, dtype=pdt, requires_grad=True)
            ty, py = tm(tx), pm(px)
            ty.backward(torch.tensor(g, dtype=tdt))
            py.backward(pylucid.tensor(g, dtype=pdt))
            np.testing.assert_allclose(np.asarray(py.detach()), ty.detach().numpy(), **tol)
            for a, b in [(px.grad, tx.grad), (pm.weight.grad, tm.weight.grad), (pm.bias.grad, tm.bias.grad),
                         (pm.running_mean, tm.running_mean), (pm.running_var, tm.running_var)]:
                np.testing.assert_allclose(np.asarray(a), b.numpy(), **tol)
        assert int(pm.num_batches_tracked) == int(tm.num_batches_tracked) == 3
        tm.eval(), pm.eval()
        x = RNG.standard_normal(shape)
        np.testing.assert_allclose(np.asarray(pm(pylucid.tensor(x, dtype=pdt))),
                                   tm(torch.tensor(x, dtype=tdt)).detach().numpy(), **tol)


def test_group_and_instance_norm_match_torch():
    """Guards against GroupNorm/InstanceNorm (incl. tracked running statistics and unbatched
    input) differing from PyTorch's."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 4, 6))
    tg, pg = torch.nn.GroupNorm(2, 4).double(), pylucid.nn.GroupNorm(2, 4).double()
    with torch.no_grad():
        tg.weight.uniform_(), tg.bias.uniform_()
    pg.load_state_dict({k: pylucid.from_numpy(v.numpy().copy()) for k, v in tg.state_dict().items()})
    tx, px = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
    tg(tx).pow(2).sum().backward()
    pg(px).pow(2).sum().backward()
    np.testing.assert_allclose(np.asarray(px.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pg.weight.grad), tg.weight.grad.numpy(), rtol=1e-10)
    ti = torch.nn.InstanceNorm1d(4, affine=True, track_running_stats=True).double()
    pi = pylucid.nn.InstanceNorm1d(4, affine=True, track_running_stats=True).double()
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(pi(pylucid.tensor(x))), ti(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pi.running_var), ti.running_var.numpy(), rtol=1e-12)
    pi.eval(), ti.eval()
    np.testing.assert_allclose(np.asarray(pi(pylucid.tensor(x[0]))), ti(torch.tensor(x[0])).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def test_grad_fn_and_schema():
    """Guards against the fused ops recording a composite graph instead of their one node."""
    x = pylucid.randn(4, 3, requires_grad=True)
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "BatchNormBackward"
    assert F.group_norm(x, 3).grad_fn.name() == "GroupNormBackward"
    assert pylucid.ops.schema("batch_norm").amp_policy == pylucid.ops.AmpPolicy.ForceFP32
    assert pylucid.ops.schema("group_norm").produces_grad
