"""conv1d/conv2d/conv_transpose1d/conv_transpose2d, the Conv modules and pad: forward against
numpy composites, float64 gradcheck of input, weight and bias, odd shapes (kernel larger than the
input with padding, stride larger than the kernel, empty and size-1 batches, non-contiguous
inputs), PyTorch with copied weights where installed, and typed errors naming the layer."""
import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid import nn
from pylucid.nn import functional as F

RNG = np.random.default_rng(13)


def _pair(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct N-d (1 or 2) cross-correlation in numpy: zero-pad, then sum over taps."""
    n = w.ndim - 2
    s, p, d = _pair(stride, n), _pair(padding, n), _pair(dilation, n)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    k = w.shape[2:]
    out_sz = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(n)]
    N, C = x.shape[:2]
    O = w.shape[0]
    cg, og = C // groups, O // groups
    y = np.zeros((N, O, *out_sz))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for tap in np.ndindex(*k):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out_sz[i] - 1) + 1, s[i]) for i in range(n))
            patch = xs[(slice(None), slice(None)) + sl]  # (N, cg, *out)
            wt = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]  # (og, cg)
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wt)
    if b is not None:
        y += b.reshape((1, O) + (1,) * n)
    return y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed convolution in numpy: scatter each input pixel times the kernel, then crop."""
    n = w.ndim - 2
    s, p, op, d = _pair(stride, n), _pair(padding, n), _pair(output_padding, n), _pair(dilation, n)
    N, C = x.shape[:2]
    k = w.shape[2:]
    og = w.shape[1]
    O = og * groups
    cg = C // groups
    full = [(x.shape[2 + i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(n)]
    y = np.zeros((N, O, *full))
    for g in range(groups):
        for tap in np.ndindex(*k):
            wt = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]  # (cg, og)
            contrib = np.einsum("nc...,co->no...", x[:, g * cg:(g + 1) * cg], wt)
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (x.shape[2 + i] - 1) + 1, s[i]) for i in range(n))
            y[(slice(None), slice(g * og, (g + 1) * og)) + sl] += contrib
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(n))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((1, O) + (1,) * n)
    return y


CONV2D_CASES = [
    # x shape, w shape, kwargs
    ((2, 3, 6, 5), (4, 3, 3, 2), {}),
    ((2, 4, 7, 6), (6, 2, 3, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ((1, 3, 2, 2), (2, 3, 3, 3), dict(padding=1)),            # kernel larger than the input, padded
    ((2, 2, 7, 7), (3, 2, 2, 2), dict(stride=3)),             # stride larger than the kernel
    ((2, 3, 5, 5), (3, 1, 3, 3), dict(padding=1, groups=3)),  # depthwise
    ((0, 3, 5, 5), (2, 3, 3, 3), {}),                         # empty batch
]


@pytest.mark.parametrize("xs,ws,kw", CONV2D_CASES)
def test_conv2d_matches_numpy_and_gradchecks(xs, ws, kw):
    """Guards against wrong im2col offsets for stride/padding/dilation, group slicing, and a
    wrong input, weight or bias gradient (including on strided inputs and accumulation)."""
    check_op(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: ref_conv(x, w, b, **kw),
             [xs, ws, (ws[0],)])


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 9), (4, 3, 3), dict(stride=2, padding=1)),
    ((1, 4, 5), (4, 2, 2), dict(dilation=3, groups=2)),
    ((3, 2, 4), (2, 2, 5), dict(padding=2)),
])
def test_conv1d_matches_numpy_and_gradchecks(xs, ws, kw):
    """Guards against the 1-d path (H = 1) mixing up which dim the sizes apply to."""
    check_op(lambda x, w, b: F.conv1d(x, w, b, **kw), lambda x, w, b: ref_conv(x, w, b, **kw),
             [xs, ws, (ws[0],)])


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 4, 3, 4), (4, 3, 3, 3), {}),
    ((2, 4, 3, 3), (4, 2, 3, 2), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 2, 3, 2), (2, 3, 2, 3), dict(stride=(3, 2), padding=(0, 1), output_padding=(2, 0), dilation=(2, 1))),
    ((0, 2, 3, 3), (2, 2, 2, 2), {}),
])
def test_conv_transpose2d_matches_numpy_and_gradchecks(xs, ws, kw):
    """Guards against col2im scattering to the wrong pixels, output_padding ignored, and the
    transposed weight layout (C_in, C_out / groups, kH, kW) read the wrong way round."""
    g = kw.get("groups", 1)
    check_op(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw), lambda x, w, b: ref_conv_transpose(x, w, b, **kw),
             [xs, ws, (ws[1] * g,)])


def test_conv_transpose1d_matches_numpy_and_gradchecks():
    """Guards against the 1-d transposed path."""
    kw = dict(stride=3, padding=1, output_padding=2)
    check_op(lambda x, w, b: F.conv_transpose1d(x, w, b, **kw), lambda x, w, b: ref_conv_transpose(x, w, b, **kw),
             [(2, 3, 4), (3, 2, 3), (2,)])


def test_same_and_valid_padding():
    """Guards against 'same' with an even kernel putting the extra pad on the wrong side."""
    x, w = RNG.standard_normal((1, 2, 6, 7)), RNG.standard_normal((3, 2, 4, 3))
    y = F.conv2d(pylucid.tensor(x), pylucid.tensor(w), padding="same")
    xp = np.pad(x, [(0, 0), (0, 0), (1, 2), (1, 1)])
    np.testing.assert_allclose(np.asarray(y), ref_conv(xp, w), atol=1e-12)
    v = F.conv2d(pylucid.tensor(x), pylucid.tensor(w), padding="valid")
    np.testing.assert_allclose(np.asarray(v), ref_conv(x, w), atol=1e-12)


def test_unbatched_input():
    """Guards against (C, H, W) inputs being read as a batch of C single-channel images."""
    x, w = RNG.standard_normal((2, 5, 5)), RNG.standard_normal((3, 2, 3, 3))
    y = F.conv2d(pylucid.tensor(x), pylucid.tensor(w))
    assert y.shape == (3, 3, 3)
    np.testing.assert_allclose(np.asarray(y), ref_conv(x[None], w)[0], atol=1e-12)


def test_float32_and_grad_fn():
    """Guards against float32 taking a float64 path (or the reverse) and a missing node."""
    x = pylucid.randn(2, 3, 8, 8, requires_grad=True)
    conv = nn.Conv2d(3, 4, 3)
    y = conv(x)
    assert y.dtype == pylucid.float32 and y.grad_fn.name() == "ConvolutionBackward"
    assert pylucid.autograd.ConvolutionBackward.schema_v1.name == "convolution"
    ref = ref_conv(np.asarray(x.detach(), dtype=np.float64), np.asarray(conv.weight.detach(), dtype=np.float64),
                   np.asarray(conv.bias.detach(), dtype=np.float64))
    np.testing.assert_allclose(np.asarray(y.detach()), ref, rtol=1e-4, atol=1e-5)


def test_module_parameters_and_init():
    """Guards against PyTorch-incompatible parameter shapes, state_dict keys and init bounds."""
    c = nn.Conv2d(4, 8, (3, 5), groups=2)
    assert c.weight.shape == (8, 2, 3, 5) and c.bias.shape == (8,)
    assert list(c.state_dict()) == ["weight", "bias"]
    bound = 1 / np.sqrt(2 * 3 * 5)
    assert np.abs(np.asarray(c.weight.detach())).max() <= bound + 1e-7
    assert np.abs(np.asarray(c.bias.detach())).max() <= bound + 1e-7
    t = nn.ConvTranspose2d(4, 6, 3, groups=2, bias=False)
    assert t.weight.shape == (4, 3, 3, 3) and t.bias is None
    assert nn.Conv1d(2, 3, 4).weight.shape == (3, 2, 4)
    assert nn.ConvTranspose1d(2, 3, 4).weight.shape == (2, 3, 4)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padding_modes_gradcheck(mode):
    """Guards against padding_mode being ignored or its gradient not folding back."""
    conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, dtype=pylucid.float64)
    x = pylucid.tensor(RNG.standard_normal((2, 2, 4, 5))).requires_grad_()
    assert pylucid.autograd.gradcheck(lambda a: conv(a), [x])
    xn = np.asarray(x.detach())
    np_mode = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(xn, [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode)
    ref = ref_conv(xp, np.asarray(conv.weight.detach()), np.asarray(conv.bias.detach()))
    np.testing.assert_allclose(np.asarray(conv(x).detach()), ref, atol=1e-12)


@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("reflect", "reflect"),
                                          ("replicate", "edge"), ("circular", "wrap")])
@pytest.mark.parametrize("pads", [(1, 2), (2, 0, 1, 3)])
def test_pad_matches_numpy_and_gradchecks(mode, np_mode, pads):
    """Guards against pairs applied to the wrong dims (PyTorch lists the last dim first)."""
    k = len(pads) // 2
    shape = (2, 3, 4, 5)[:k + 2]
    widths = [(0, 0)] * 2 + [(pads[2 * j], pads[2 * j + 1]) for j in reversed(range(k))]
    check_op(lambda x: F.pad(x, pads, mode=mode), lambda x: np.pad(x, widths, mode=np_mode), [shape])


def test_pad_constant_value_and_negative():
    """Guards against the fill value being dropped and negative pads not cropping."""
    x = pylucid.tensor([[1.0, 2.0, 3.0]])
    assert F.pad(x, (1, 1), value=7.0).tolist() == [[7.0, 1.0, 2.0, 3.0, 7.0]]
    assert F.pad(x, (-1, 1)).tolist() == [[2.0, 3.0, 0.0]]
    xi = pylucid.tensor([[1, 2]])
    assert F.pad(xi, (1, 0), value=5).tolist() == [[5, 1, 2]]


def test_errors_name_the_layer():
    """Guards against crashes or untyped errors on bad input."""
    conv = nn.Conv2d(3, 4, 3)
    with pytest.raises(pylucid.ShapeMismatch, match="Conv2d.*3 channels, but got 2"):
        conv(pylucid.ones(1, 2, 5, 5))
    with pytest.raises(pylucid.ShapeMismatch, match="Conv2d.*kernel size can't be greater"):
        conv(pylucid.ones(1, 3, 2, 2))
    with pytest.raises(pylucid.ShapeMismatch, match="conv2d: expected 3-D .* or 4-D"):
        F.conv2d(pylucid.ones(3, 3), pylucid.ones(1, 3, 1, 1))
    with pytest.raises(pylucid.DtypeMismatch, match="conv2d"):
        F.conv2d(pylucid.ones(1, 1, 3, 3), pylucid.ones(1, 1, 1, 1, dtype=pylucid.float64))
    with pytest.raises(pylucid.DtypeMismatch, match="conv1d"):
        F.conv1d(pylucid.ones(1, 1, 3, dtype=pylucid.int64), pylucid.ones(1, 1, 1, dtype=pylucid.int64))
    with pytest.raises(pylucid.LucidError, match="strided"):
        F.conv2d(pylucid.ones(1, 1, 3, 3), pylucid.ones(1, 1, 1, 1), stride=2, padding="same")
    with pytest.raises(pylucid.ShapeMismatch, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(pylucid.LucidError, match="output padding"):
        F.conv_transpose2d(pylucid.ones(1, 1, 3, 3), pylucid.ones(1, 1, 3, 3), stride=1, output_padding=1)
    with pytest.raises(pylucid.ShapeMismatch, match="reflect"):
        F.pad(pylucid.ones(1, 2, 3), (3, 0), mode="reflect")
    with pytest.raises(pylucid.LucidError, match="padding_mode"):
        nn.Conv1d(1, 1, 1, padding_mode="mirror")


def test_matches_torch_with_copied_weights():
    """Guards against any layout or convention difference from PyTorch (float32 and float64)."""
    torch = pytest.importorskip("torch")
    for dtype, tdtype, tol in [(pylucid.float32, torch.float32, 1e-4), (pylucid.float64, torch.float64, 1e-10)]:
        for tm, lm, xs in [
            (torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="reflect"),
             nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="reflect"), (2, 3, 7, 6)),
            (torch.nn.Conv1d(4, 4, 4, padding="same", groups=4), nn.Conv1d(4, 4, 4, padding="same", groups=4),
             (3, 4, 9)),
            (torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
             nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), (2, 4, 3, 5)),
            (torch.nn.ConvTranspose1d(2, 4, 3, stride=2, groups=2, dilation=2),
             nn.ConvTranspose1d(2, 4, 3, stride=2, groups=2, dilation=2), (1, 2, 5)),
        ]:
            tm = tm.to(tdtype)
            lm.load_state_dict({k: pylucid.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
            lm = lm.to(dtype) if hasattr(lm, "to") else lm
            assert list(lm.state_dict()) == list(tm.state_dict())
            assert repr(lm) == repr(tm)
            x = RNG.standard_normal(xs)
            tx = torch.tensor(x, dtype=tdtype, requires_grad=True)
            lx = pylucid.tensor(x, dtype=dtype).requires_grad_()
            ty, ly = tm(tx), lm(lx)
            g = RNG.standard_normal(tuple(ty.shape))
            ty.backward(torch.tensor(g, dtype=tdtype))
            ly.backward(pylucid.tensor(g, dtype=dtype))
            np.testing.assert_allclose(np.asarray(ly.detach()), ty.detach().numpy(), rtol=tol, atol=tol)
            np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=tol, atol=tol)
            for (_, p), (_, q) in zip(tm.named_parameters(), lm.named_parameters()):
                np.testing.assert_allclose(np.asarray(q.grad), p.grad.numpy(), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 2e-4)])
def test_lenet_training_parity_with_torch(dtype, rtol):
    """Guards against a LeNet-style CNN (conv, batch norm, max and average pooling, linear
    head) drifting from PyTorch over Adam steps from the same weights: losses, final weights
    and batch-norm running statistics."""
    torch = pytest.importorskip("torch")

    def build(lib):
        n = lib.nn
        # no bias before the batch norm: its gradient is zero up to rounding, which Adam would
        # blow up into full-size steps of noise in float32
        return n.Sequential(n.Conv2d(1, 4, 5, padding=2, bias=False), n.BatchNorm2d(4), n.ReLU(), n.MaxPool2d(2),
                            n.Conv2d(4, 8, 5), n.ReLU(), n.AvgPool2d(2), n.Flatten(),
                            n.Linear(8 * 5 * 5, 32), n.ReLU(), n.Linear(32, 10)).to(getattr(lib, dtype))

    tm, pm = build(torch), build(pylucid)
    pm.load_state_dict({k: pylucid.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    topt, popt = torch.optim.Adam(tm.parameters(), lr=1e-2), pylucid.optim.Adam(pm.parameters(), lr=1e-2)
    rng = np.random.default_rng(5)
    losses = []
    for step in range(5):
        x, y = rng.standard_normal((6, 1, 28, 28)), rng.integers(0, 10, 6)
        step_losses = []
        for lib, m, opt in ((torch, tm, topt), (pylucid, pm, popt)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x, dtype=getattr(lib, dtype))), lib.tensor(y))
            loss.backward()
            opt.step()
            step_losses.append(loss.item())
        losses.append(step_losses)
    t, p = np.array(losses).T
    np.testing.assert_allclose(p, t, rtol=rtol)
    ps = pm.state_dict()
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(np.asarray(ps[k]), v.numpy(), rtol=rtol * 10, atol=rtol, err_msg=k)


def test_empty_batch_with_empty_transposed_output():
    """Guards against an empty batch whose transposed-convolution output is empty raising (PyTorch
    returns the empty result and zero weight gradients); a negative size still raises."""
    m = nn.ConvTranspose1d(2, 3, 2, padding=2)
    x = pylucid.zeros(0, 2, 3).requires_grad_()
    y = m(x)
    assert y.shape == (0, 3, 0)
    y.sum().backward()
    assert float(m.weight.grad.abs().sum()) == 0 and m.bias.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(pylucid.ShapeMismatch, match="too small"):
        m(pylucid.zeros(1, 2, 3))
    with pytest.raises(pylucid.ShapeMismatch, match="too small"):
        nn.ConvTranspose1d(2, 3, 2, padding=3)(pylucid.zeros(0, 2, 3))
