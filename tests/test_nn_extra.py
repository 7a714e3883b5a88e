"""F.unfold/F.fold (and nn.Unfold/nn.Fold), nn.Bilinear, nn.EmbeddingBag, Gaussian and Poisson
NLL losses, F.gumbel_softmax, pylucid.linalg inv/solve/det/slogdet, utils.checkpoint and weight
normalisation (parametrization and hook forms): values against PyTorch on copied weights
(skipped without torch), float64 gradcheck, and typed errors."""
import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(12)


def _np(t):
    return np.asarray(t.detach().numpy())


def _t(a, rg=False):
    return pylucid.tensor(np.asarray(a), requires_grad=rg)


@pytest.mark.parametrize("kw", [{"kernel_size": 3}, {"kernel_size": (2, 3), "stride": 2, "padding": 1},
                                {"kernel_size": 2, "dilation": (2, 1), "padding": (0, 1), "stride": (1, 2)}])
def test_unfold_fold_equal_torch_and_gradcheck(kw):
    """Guards against a wrong column order (channel major, then kernel offset, then block) or a
    fold that drops overlaps or padding."""
    x = RNG.standard_normal((2, 3, 6, 7))
    cols = F.unfold(pylucid.tensor(x), **kw)
    back = F.fold(cols, (6, 7), **kw)
    assert gradcheck(lambda t: F.unfold(t, **kw), [_t(x[:1, :2], True)])
    assert gradcheck(lambda c: F.fold(c, (6, 7), **kw), [_t(_np(cols)[:1, :], True)])
    assert gradgradcheck(lambda t: F.fold(F.unfold(t, **kw) ** 2, (6, 7), **kw), [_t(x[:1, :1], True)])
    torch = pytest.importorskip("torch")
    tc = torch.nn.functional.unfold(torch.tensor(x), **kw)
    np.testing.assert_allclose(_np(cols), tc.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(back), torch.nn.functional.fold(tc, (6, 7), **kw).numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(pylucid.nn.Unfold(**kw)(pylucid.tensor(x[0]))), tc[0].numpy(), rtol=1e-12)


def test_bilinear_and_embedding_bag_equal_torch():
    """Bilinear on copied weights (batched leading dims), EmbeddingBag sum/mean/max with offsets,
    include_last_offset, per_sample_weights, padding_idx, an empty bag; gradients too."""
    torch = pytest.importorskip("torch")
    tb = torch.nn.Bilinear(4, 3, 2).double()
    pb = pylucid.nn.Bilinear(4, 3, 2).double()
    pb.load_state_dict({k: pylucid.tensor(v.detach().numpy()) for k, v in tb.state_dict().items()})
    a, b = RNG.standard_normal((2, 5, 4)), RNG.standard_normal((2, 5, 3))
    np.testing.assert_allclose(_np(pb(pylucid.tensor(a), pylucid.tensor(b))),
                               tb(torch.tensor(a), torch.tensor(b)).detach().numpy(), rtol=1e-12)
    W = RNG.standard_normal((10, 3))
    text = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    cases = [({"mode": "sum"}, [0, 4, 4], {"per_sample_weights": RNG.random(10)}),
             ({"mode": "mean", "padding_idx": 0}, [0, 3, 8], {}),
             ({"mode": "max"}, [0, 2, 5], {}),
             ({"mode": "mean", "include_last_offset": True}, [0, 3, 7, 10], {})]
    for kw, offsets, extra in cases:
        outs = []
        for L in (pylucid, torch):
            w = L.tensor(W, requires_grad=True)
            bag = L.nn.EmbeddingBag.from_pretrained(w, freeze=False, **kw)
            args = {k: L.tensor(v) for k, v in extra.items()}
            y = bag(L.tensor(text), L.tensor(offsets), **args)
            (y * L.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))).sum().backward()
            outs.append((np.asarray(y.detach().numpy()), np.asarray(bag.weight.grad.numpy())))
        for p, q in zip(*outs):
            np.testing.assert_allclose(p, q, rtol=1e-12, err_msg=str(kw))


def test_bilinear_and_bag_gradcheck_without_torch():
    w = _t(RNG.standard_normal((2, 3, 4)), True)
    x1, x2 = _t(RNG.standard_normal((5, 3)), True), _t(RNG.standard_normal((5, 4)), True)
    assert gradcheck(lambda a, b, w: F.bilinear(a, b, w, None), [x1, x2, w])
    table = _t(RNG.standard_normal((6, 3)), True)
    idx, offs = pylucid.tensor([0, 5, 5, 2, 1]), pylucid.tensor([0, 2])
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda t, m=mode: F.embedding_bag(idx, t, offs, mode=m), [table])
    out = F.embedding_bag(pylucid.tensor([[1, 2], [3, 3]]), table, mode="sum")
    np.testing.assert_allclose(_np(out), _np(table)[[1, 3]] + _np(table)[[2, 3]])


def test_gaussian_and_poisson_nll_equal_torch():
    """Both losses in every reduction, the per-sample variance shapes, full=True, and gradients."""
    torch = pytest.importorskip("torch")
    mu, y = RNG.standard_normal((6, 2)), RNG.standard_normal((6, 2))
    for var_shape in ((6, 2), (6, 1), (6,)):
        var = RNG.random(var_shape) + 0.01
        var.flat[0] = 1e-9  # below eps: clamped, gradient passed through
        for red in ("mean", "sum", "none"):
            for full in (False, True):
                res = []
                for L in (pylucid, torch):
                    ts = [L.tensor(a, requires_grad=True) for a in (mu, y, var)]
                    out = L.nn.GaussianNLLLoss(full=full, reduction=red)(*ts)
                    out.sum().backward()
                    res.append([np.asarray(out.detach().numpy())] + [np.asarray(t.grad.numpy()) for t in ts])
                for p, q in zip(*res):
                    np.testing.assert_allclose(p, q, rtol=1e-10)
    rate, k = RNG.standard_normal(8), np.round(RNG.random(8) * 5)
    for log_input in (True, False):
        for full in (False, True):
            res = []
            for L in (pylucid, torch):
                r = L.tensor(rate if log_input else np.abs(rate), requires_grad=True)
                out = L.nn.PoissonNLLLoss(log_input=log_input, full=full)(r, L.tensor(k))
                out.backward()
                res.append((out.item(), np.asarray(r.grad.numpy())))
            np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
            np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_losses_gradcheck_and_errors():
    mu, y = _t(RNG.standard_normal((4, 3)), True), _t(RNG.standard_normal((4, 3)))
    var = _t(RNG.random((4, 1)) + 0.1, True)
    assert gradcheck(lambda m, v: F.gaussian_nll_loss(m, y, v, full=True), [mu, var])
    assert gradcheck(lambda m: F.poisson_nll_loss(m, y.abs(), full=True), [mu])
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(mu, y, -var)
    with pytest.raises(ValueError, match="gaussian_nll_loss"):
        F.gaussian_nll_loss(mu, y, pylucid.ones(3, 4))


def test_gumbel_softmax_draws_as_torch():
    """Same seed, same samples (soft and hard) and the straight-through gradient."""
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((5, 4)).astype(np.float32)
    res = []
    for L in (pylucid, torch):
        L.manual_seed(7)
        lg = L.tensor(logits, requires_grad=True)
        soft = L.nn.functional.gumbel_softmax(lg, tau=0.7)
        hard = L.nn.functional.gumbel_softmax(lg, hard=True, dim=0)
        (hard * L.arange(20.0).view(5, 4)).sum().backward()
        res.append([np.asarray(t.detach().numpy()) for t in (soft, hard, lg.grad)])
    for p, q in zip(*res):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
    assert set(np.unique(res[0][1])) <= {0.0, 1.0} and (res[0][1].sum(0) == 1).all()


def test_linalg_against_numpy_torch_and_gradcheck():
    """inv/solve/det/slogdet/logdet on batches, solve with vectors and left=False; float64 gradcheck
    and gradgradcheck; a singular matrix raises."""
    A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    B = RNG.standard_normal((2, 3, 2))
    L = pylucid.linalg
    np.testing.assert_allclose(_np(L.inv(pylucid.tensor(A))), np.linalg.inv(A), rtol=1e-12)
    np.testing.assert_allclose(_np(L.solve(pylucid.tensor(A), pylucid.tensor(B))), np.linalg.solve(A, B), rtol=1e-10)
    np.testing.assert_allclose(_np(L.solve(pylucid.tensor(A[0]), pylucid.tensor(B[0, :, 0]))),
                               np.linalg.solve(A[0], B[0, :, 0]), rtol=1e-10)
    np.testing.assert_allclose(_np(L.solve(pylucid.tensor(A), pylucid.tensor(B.transpose(0, 2, 1)), left=False)),
                               np.linalg.solve(A.transpose(0, 2, 1), B).transpose(0, 2, 1), rtol=1e-10)
    np.testing.assert_allclose(_np(pylucid.det(pylucid.tensor(A))), np.linalg.det(A), rtol=1e-12)
    sign, lad = pylucid.slogdet(pylucid.tensor(-A))
    ns, nl = np.linalg.slogdet(-A)
    np.testing.assert_array_equal(_np(sign), ns)
    np.testing.assert_allclose(_np(lad), nl, rtol=1e-12)
    assert np.isnan(_np(pylucid.logdet(pylucid.tensor(-A[:1])))).all()
    At, Bt = _t(A, True), _t(B, True)
    assert gradcheck(L.inv, [At]) and gradcheck(L.solve, [At, Bt]) and gradcheck(L.det, [At])
    assert gradcheck(lambda a: L.slogdet(a).logabsdet, [At])
    assert gradgradcheck(L.inv, [At]) and gradgradcheck(L.det, [At])
    assert gradcheck(lambda a: a.inverse().det(), [At])
    with pytest.raises(RuntimeError, match="singular"):
        L.inv(pylucid.zeros(2, 2))
    with pytest.raises(ValueError, match="square"):
        L.det(pylucid.zeros(2, 3))
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(_np(L.solve(pylucid.tensor(A), pylucid.tensor(B))),
                               torch.linalg.solve(torch.tensor(A), torch.tensor(B)).numpy(), rtol=1e-10)


def test_checkpoint_gives_the_plain_gradients():
    """Inputs and parameters get the gradients of the plain forward; dropout inside is replayed
    with the same random state; an input that needs no grad still trains the parameters; the
    graph inside is not kept."""
    from pylucid.utils.checkpoint import checkpoint, checkpoint_sequential

    net = pylucid.nn.Sequential(pylucid.nn.Linear(4, 6), pylucid.nn.Dropout(0.3), pylucid.nn.Tanh(),
                                pylucid.nn.Linear(6, 2)).double()
    x = _t(RNG.standard_normal((5, 4)), True)
    grads = []
    for use in (False, True, "seq"):
        net.zero_grad()
        x.grad = None
        pylucid.manual_seed(3)
        if use == "seq":
            y = checkpoint_sequential(net, 2, x)
        else:
            y = checkpoint(net, x, use_reentrant=False) if use else net(x)
        (y ** 2).sum().backward()
        grads.append([_np(x.grad)] + [_np(p.grad) for p in net.parameters()])
    for g in grads[1:]:
        for p, q in zip(g, grads[0]):
            np.testing.assert_allclose(p, q, rtol=1e-12)
    net.zero_grad()
    checkpoint(net, pylucid.ones(1, 4, dtype=pylucid.float64)).sum().backward()
    assert net[0].weight.grad is not None
    assert gradcheck(lambda t: checkpoint(lambda u: (u.sin() * u).sum(1), t), [x])


def test_weight_norm_both_forms_equal_torch():
    """The parametrization's names, its forward g * v / ||v|| (dim 0 and 1), gradients into g and v,
    the older hook form, and removal of both."""
    from pylucid.nn.utils import parametrize

    lin = pylucid.nn.Linear(4, 3).double()
    w0 = _np(lin.weight).copy()
    pylucid.nn.utils.parametrizations.weight_norm(lin, dim=1)
    names = sorted(n for n, _ in lin.named_parameters())
    assert names == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    np.testing.assert_allclose(_np(lin.weight), w0, rtol=1e-12)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    g = lin.parametrizations.weight.original0
    assert tuple(g.shape) == (1, 4)
    assert gradcheck(lambda gg, vv: pylucid.nn.utils.parametrizations._weight_norm(vv, gg, 1),
                     [g.detach().clone().requires_grad_(True),
                      lin.parametrizations.weight.original1.detach().clone().requires_grad_(True)])
    parametrize.remove_parametrizations(lin, "weight")
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight"] and type(lin) is pylucid.nn.Linear
    np.testing.assert_allclose(_np(lin.weight), w0, rtol=1e-12)
    old = pylucid.nn.utils.weight_norm(pylucid.nn.Linear(4, 3).double())
    assert sorted(n for n, _ in old.named_parameters()) == ["bias", "weight_g", "weight_v"]
    with pylucid.no_grad():
        old.weight_g.mul_(2)
    x = _t(RNG.standard_normal((2, 4)))
    y = old(x)
    np.testing.assert_allclose(_np(y), _np(x) @ (2 * _np(old.weight_v)).T + _np(old.bias), rtol=1e-12)
    pylucid.nn.utils.remove_weight_norm(old)
    assert sorted(n for n, _ in old.named_parameters()) == ["bias", "weight"]
    torch = pytest.importorskip("torch")
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3).double())
    p = pylucid.nn.utils.parametrizations.weight_norm(pylucid.nn.Linear(4, 3).double())
    p.load_state_dict({k: pylucid.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    xt = RNG.standard_normal((5, 4))
    yt, yp = t(torch.tensor(xt)), p(pylucid.tensor(xt))
    np.testing.assert_allclose(_np(yp), yt.detach().numpy(), rtol=1e-12)
    yt.sum().backward()
    yp.sum().backward()
    for k in ("original0", "original1"):
        np.testing.assert_allclose(_np(getattr(p.parametrizations.weight, k).grad),
                                   getattr(t.parametrizations.weight, k).grad.numpy(), rtol=1e-10)


def test_solve_broadcasts_batches_with_gradients():
    """A single matrix against a batch of right-hand sides (and the reverse): gradients summed back
    over the broadcast batch dims."""
    A = _t(RNG.standard_normal((3, 3)) + 3 * np.eye(3), True)
    B = _t(RNG.standard_normal((4, 3, 2)), True)
    assert gradcheck(pylucid.linalg.solve, [A, B])
    A2 = _t(RNG.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3), True)
    B2 = _t(RNG.standard_normal((5, 3, 1)), True)
    assert gradcheck(pylucid.linalg.solve, [A2, B2])
    with pytest.raises(RuntimeError, match="singular"):
        pylucid.linalg.solve(pylucid.zeros(2, 2), pylucid.ones(2))


def test_margin_losses_lrn_shuffle_softmax2d_equal_torch():
    """MultiLabelSoftMarginLoss, MultiMarginLoss (p 1 and 2, weights, 1-d input), LocalResponseNorm
    on 3-, 4- and 5-d input, ChannelShuffle and Softmax2d: values and input gradients."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((4, 6))
    y_multi = (RNG.random((4, 6)) > 0.5).astype(np.float64)
    y = np.array([0, 5, 2, 2])
    w = RNG.random(6) + 0.5
    img = RNG.standard_normal((2, 6, 3, 4))
    cases = [
        lambda L, t: L.nn.MultiLabelSoftMarginLoss(weight=L.tensor(w))(t, L.tensor(y_multi)),
        lambda L, t: L.nn.MultiLabelSoftMarginLoss(reduction="none")(t, L.tensor(y_multi)),
        lambda L, t: L.nn.MultiMarginLoss()(t, L.tensor(y)),
        lambda L, t: L.nn.MultiMarginLoss(p=2, margin=0.5, weight=L.tensor(w), reduction="sum")(t, L.tensor(y)),
        lambda L, t: L.nn.functional.multi_margin_loss(t[0], L.tensor(3)),
        lambda L, t: L.nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0)(t.reshape(1, 6, 4)),
        lambda L, t: L.nn.LocalResponseNorm(2)(L.tensor(img, requires_grad=False) * t.sum()),
        lambda L, t: L.nn.LocalResponseNorm(4)(t.reshape(1, 6, 2, 2, 1) * 3),
        lambda L, t: L.nn.ChannelShuffle(3)(t.reshape(2, 6, 2)),
        lambda L, t: L.nn.Softmax2d()(t.reshape(1, 6, 2, 2)),
    ]
    for i, f in enumerate(cases):
        res = []
        for L in (pylucid, torch):
            t = L.tensor(x, requires_grad=True)
            out = f(L, t)
            (out * L.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
            res.append((np.asarray(out.detach().numpy()), np.asarray(t.grad.numpy())))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10, atol=1e-12, err_msg=str(i))
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12, err_msg=str(i))


def test_margin_losses_and_lrn_gradcheck():
    x = _t(RNG.standard_normal((3, 5)), True)
    assert gradcheck(lambda t: F.multilabel_soft_margin_loss(t, (t.detach() > 0).double()), [x])
    assert gradcheck(lambda t: F.multi_margin_loss(t, pylucid.tensor([0, 4, 1]), p=2), [x])
    assert gradcheck(lambda t: F.local_response_norm(t.reshape(1, 5, 3), 3), [x])
    with pytest.raises(ValueError, match="multi_margin_loss"):
        F.multi_margin_loss(x, pylucid.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="channel_shuffle"):
        F.channel_shuffle(pylucid.zeros(1, 5, 2), 2)
    assert pylucid.ones(2).byte().dtype == pylucid.int64
