"""Double backward (create_graph=True) of the losses, embedding, dropout, pad, convolution and
attention: gradgradcheck in float64, and the recorded gradients equal to the fused first-order
ones (tests/helpers.py check_double_backward). Second derivatives are compared with torch where
it is installed."""
import numpy as np
import pytest

import pylucid
from helpers import check_double_backward

F = pylucid.nn.functional
F64 = pylucid.float64
RNG = np.random.default_rng(11)


def t64(a, grad=True):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), dtype=F64, requires_grad=grad)


def randn(*shape, grad=True):
    return t64(RNG.standard_normal(shape), grad)


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_index_target(reduction, smoothing, weighted):
    """Guards class-index cross entropy with label_smoothing, class weights and ignore_index."""
    x = randn(4, 3, 2)
    t = pylucid.tensor([[0, 2], [1, -100], [2, 2], [-100, 0]])
    w = t64([0.5, 2.0, 1.5], grad=False) if weighted else None
    fn = lambda a: F.cross_entropy(a, t, weight=w, reduction=reduction, label_smoothing=smoothing)  # noqa: E731
    check_double_backward(fn, [x])
    check_double_backward(lambda a: F.cross_entropy(a, pylucid.tensor(1), label_smoothing=smoothing), [randn(3)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probability_target(reduction, smoothing):
    """Guards probability targets: the gradient with respect to the target is recorded too."""
    x = randn(3, 4)
    q = t64(np.abs(RNG.standard_normal((3, 4))) + 0.1)
    w = t64([0.5, 2.0, 1.0, 1.5], grad=False)
    check_double_backward(lambda a, b: F.cross_entropy(a, b, reduction=reduction, label_smoothing=smoothing), [x, q])
    check_double_backward(lambda a, b: F.cross_entropy(a, b, weight=w, reduction=reduction), [x, q])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    x = randn(4, 3)
    t = pylucid.tensor([0, 2, -100, 1])
    w = t64([0.5, 2.0, 1.5], grad=False)
    check_double_backward(lambda a: F.nll_loss(F.log_softmax(a, 1), t, weight=w, reduction=reduction), [x])
    check_double_backward(lambda a: F.nll_loss(a, t, reduction=reduction) * a.sum(), [x])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"])
def test_pointwise_losses(name, reduction):
    x, t = randn(3, 4), randn(3, 4)
    if name == "soft_margin_loss":
        t = t64(np.sign(RNG.standard_normal((3, 4))))
    check_double_backward(lambda a, b: getattr(F, name)(a.tanh(), b, reduction=reduction), [x, t])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    """Guards all four gradients (input, target, weight, pos_weight) and their broadcasting."""
    x, t = randn(3, 4), t64(RNG.uniform(0, 1, (3, 4)))
    w, pw = t64(RNG.uniform(0.5, 2, (1, 4))), t64(RNG.uniform(0.5, 2, (4,)))
    fn = lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, weight=c, reduction=reduction,  # noqa: E731
                                                                pos_weight=d)
    check_double_backward(fn, [x, t, w, pw])
    check_double_backward(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction), [x, t])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_binary_cross_entropy_and_kl_div(reduction):
    p, t = t64(RNG.uniform(0.1, 0.9, (3, 4))), t64(RNG.uniform(0, 1, (3, 4)))
    if reduction != "batchmean":
        check_double_backward(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), [p, t])
    lp = randn(3, 4)
    check_double_backward(lambda a, b: F.kl_div(F.log_softmax(a, 1), b, reduction=reduction), [lp, t])
    check_double_backward(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=True), [lp, randn(3, 4)])


def test_margin_losses():
    a, b, c = randn(3, 4), randn(3, 4), randn(3, 4)
    y = t64([1.0, -1.0, 1.0], grad=False)
    check_double_backward(lambda p, q: F.cosine_embedding_loss(p, q, y, margin=-0.5), [a, b])
    check_double_backward(lambda p, q, r: F.triplet_margin_loss(p, q, r, margin=3.0), [a, b, c])
    check_double_backward(lambda p, q: F.margin_ranking_loss(p.sum(1), q.sum(1), y, margin=5.0), [a, b])


def test_cross_entropy_hessian_matches_torch():
    """The Hessian of a smoothed, weighted cross entropy of a linear model, against torch."""
    torch = pytest.importorskip("torch")
    xa, wa = RNG.standard_normal((5, 3)), RNG.standard_normal((4, 3))
    ta = np.array([0, 3, 1, 1, 2])
    cw = np.array([1.0, 0.5, 2.0, 1.5])
    hs = []
    for lib in (pylucid, torch):
        x = lib.tensor(xa, dtype=lib.float64)
        t, cwt = lib.tensor(ta), lib.tensor(cw, dtype=lib.float64)

        def f(w, lib=lib, x=x, t=t, cwt=cwt):
            return lib.nn.functional.cross_entropy(x @ w.reshape(4, 3).t(), t, weight=cwt, label_smoothing=0.1)
        hs.append(np.asarray(lib.autograd.functional.hessian(f, lib.tensor(wa.reshape(-1), dtype=lib.float64))))
    np.testing.assert_allclose(hs[0], hs[1], rtol=1e-10, atol=1e-12)


def test_embedding_double_backward():
    """The embedding gradient is linear in grad_out (gather adjoint), incl. padding_idx and repeats."""
    w = randn(5, 3)
    idx = pylucid.tensor([[0, 2, 2], [4, 1, 0]])
    check_double_backward(lambda a: (F.embedding(idx, a, padding_idx=2) ** 2), [w])
    check_double_backward(lambda a: F.embedding(idx, a).tanh(), [w])


def test_dropout_double_backward():
    x = randn(4, 5)
    pylucid.manual_seed(3)
    mask_out = F.dropout(t64(np.ones((4, 5)), grad=False), 0.4)

    def fn(a):
        pylucid.manual_seed(3)
        return F.dropout(a, 0.4) ** 2
    check_double_backward(fn, [x])
    (g,) = pylucid.autograd.grad(fn(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(np.asarray(g.detach()), 2 * np.asarray(x.detach()) * np.asarray(mask_out) ** 2)


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_double_backward(transposed):
    """Guards ConvolutionBackwardBackward (dx, d_weight and d_bias nodes) on a grouped, strided,
    dilated, padded 2-d convolution and its transpose, and a 1-d one."""
    if transposed:
        x, w, b = randn(2, 4, 3, 3), randn(4, 3, 2, 2), randn(6)
        fn = lambda a, c, d: F.conv_transpose2d(a, c, d, stride=2, padding=1, output_padding=1,  # noqa: E731
                                                groups=2, dilation=1) ** 2
    else:
        x, w, b = randn(2, 4, 5, 6), randn(6, 2, 2, 3), randn(6)
        fn = lambda a, c, d: F.conv2d(a, c, d, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2) ** 2  # noqa: E731
    check_double_backward(fn, [x, w, b])
    check_double_backward(lambda a, c: F.conv1d(a, c, padding=1).tanh(), [randn(3, 5), randn(2, 3, 3)])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_double_backward(mode):
    x = randn(2, 3, 4)
    check_double_backward(lambda a: F.pad(a, (1, 2, 2, 1), mode=mode) ** 2, [x])
    if mode == "constant":
        check_double_backward(lambda a: F.pad(a, (-1, 2), value=0.5) ** 2, [x])


def test_attention_double_backward_masks_and_dropout():
    """Guards the recorded attention backward: a float mask that requires grad, a bool mask with a
    fully masked query row (zero probabilities), causal + broadcast batch dims, GQA, dropout."""
    q, k, v = randn(2, 3, 4), randn(2, 5, 4), randn(2, 5, 3)
    fm = randn(3, 5)
    check_double_backward(lambda a, b, c, d: F.scaled_dot_product_attention(a, b, c, attn_mask=d) ** 2,
                          [q, k, v, fm])
    bm = pylucid.tensor(RNG.uniform(size=(3, 5)) > 0.4)
    bm[1] = False
    check_double_backward(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=bm, scale=0.7) ** 2,
                          [q, k, v])
    qb = randn(2, 2, 3, 4)
    check_double_backward(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True).tanh(),
                          [qb, randn(2, 1, 5, 4), randn(5, 3)])
    check_double_backward(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True) ** 2,
                          [randn(1, 4, 3, 2), randn(1, 2, 5, 2), randn(1, 2, 5, 3)])

    def drop(a, b, c):
        pylucid.manual_seed(5)
        return F.scaled_dot_product_attention(a, b, c, dropout_p=0.3) ** 2
    check_double_backward(drop, [q, k, v])


def test_conv_and_attention_hvp_match_torch():
    """Hessian-vector products through conv2d and attention against torch's double backward."""
    torch = pytest.importorskip("torch")
    xa, wa, ua = RNG.standard_normal((2, 3, 5, 5)), RNG.standard_normal((4, 3, 3, 3)), RNG.standard_normal(4 * 27)
    qa, ka, va = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 6, 4)), RNG.standard_normal((2, 6, 2))
    res = []
    for lib in (pylucid, torch):
        T = lambda a, lib=lib: lib.tensor(a, dtype=lib.float64)  # noqa: E731
        x, q, k, v = T(xa), T(qa), T(ka), T(va)

        def f(w, lib=lib, x=x):
            y = lib.nn.functional.conv2d(x, w.reshape(4, 3, 3, 3), padding=1, stride=2)
            return (y.tanh() ** 2).sum()

        def g(qq, lib=lib, k=k, v=v):
            return (lib.nn.functional.scaled_dot_product_attention(qq, k, v, is_causal=True) ** 3).sum()
        hv1 = lib.autograd.functional.hvp(f, T(wa.reshape(-1)), T(ua))[1]
        hv2 = lib.autograd.functional.hvp(g, q, T(qa[::-1].copy()))[1]
        res.append((np.asarray(hv1), np.asarray(hv2)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
