"""F.affine_grid and F.grid_sample: float64 gradcheck (and gradgradcheck) in input and grid for
every mode and padding, non-contiguous and batched inputs, closed-form cases, PyTorch's numbers
where installed, typed errors."""
import itertools
import warnings

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def _t(a, grad=True):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _grid(shape, lo=-1.3, hi=1.3):
    return RNG.uniform(lo, hi, shape)


CASES_2D = list(itertools.product(["bilinear", "bicubic", "nearest"], ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode,padding,align", CASES_2D)
def test_gradcheck_2d(mode, padding, align):
    x = _t(RNG.standard_normal((2, 2, 4, 5)))
    g = _t(_grid((2, 3, 2, 2)))
    assert gradcheck(lambda a, b: F.grid_sample(a, b, mode, padding, align), (x, g))


@pytest.mark.parametrize("mode,padding,align", [c for c in CASES_2D if c[0] != "bicubic"])
def test_gradcheck_3d(mode, padding, align):
    x = _t(RNG.standard_normal((2, 2, 3, 4, 3)))
    g = _t(_grid((2, 2, 2, 2, 3)))
    assert gradcheck(lambda a, b: F.grid_sample(a, b, mode, padding, align), (x, g))


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "reflection"), ("bicubic", "border")])
def test_gradgradcheck(mode, padding):
    x = _t(RNG.standard_normal((1, 2, 3, 4)))
    g = _t(_grid((1, 2, 3, 2)))
    assert gradgradcheck(lambda a, b: F.grid_sample(a, b, mode, padding, False), (x, g))


def test_non_contiguous_inputs_match_contiguous():
    xa = RNG.standard_normal((2, 3, 5, 4))
    ga = _grid((2, 4, 3, 2))
    x_nc = pylucid.from_numpy(np.ascontiguousarray(xa.transpose(0, 1, 3, 2))).transpose(2, 3).requires_grad_(True)
    g_nc = pylucid.from_numpy(np.ascontiguousarray(ga.transpose(0, 2, 1, 3))).transpose(1, 2).requires_grad_(True)
    assert not x_nc.is_contiguous() and not g_nc.is_contiguous()
    x, g = _t(xa), _t(ga)
    for mode in ("bilinear", "bicubic", "nearest"):
        a = F.grid_sample(x, g, mode, "reflection", False)
        b = F.grid_sample(x_nc, g_nc, mode, "reflection", False)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=0, atol=1e-14)
    assert gradcheck(lambda a, b: F.grid_sample(a, b, "bilinear", "border", True), (x_nc, g_nc))


def test_batch_items_are_independent():
    xa = RNG.standard_normal((3, 2, 4, 4))
    ga = _grid((3, 2, 5, 2))
    out = F.grid_sample(_t(xa, False), _t(ga, False), "bilinear", "zeros", False).numpy()
    for n in range(3):
        one = F.grid_sample(_t(xa[n:n + 1], False), _t(ga[n:n + 1], False), "bilinear", "zeros", False).numpy()
        np.testing.assert_allclose(out[n:n + 1], one, atol=1e-15)


def _bilinear_ref(img, gx, gy, align):
    """Direct per-point bilinear sampling with zero padding (numpy, one image (C, H, W))."""
    C, H, W = img.shape
    def unnorm(c, n):
        return (c + 1) / 2 * (n - 1) if align else ((c + 1) * n - 1) / 2
    x, y = unnorm(gx, W), unnorm(gy, H)
    x0, y0 = int(np.floor(x)), int(np.floor(y))
    out = np.zeros(C)
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            w = (1 - abs(x - xi)) * (1 - abs(y - yi))
            if 0 <= xi < W and 0 <= yi < H:
                out += w * img[:, yi, xi]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_bilinear_matches_pointwise_reference(align):
    img = RNG.standard_normal((1, 2, 4, 6))
    grid = _grid((1, 3, 4, 2), -1.2, 1.2)
    out = F.grid_sample(_t(img, False), _t(grid, False), "bilinear", "zeros", align).numpy()
    for i in range(3):
        for j in range(4):
            ref = _bilinear_ref(img[0], grid[0, i, j, 0], grid[0, i, j, 1], align)
            np.testing.assert_allclose(out[0, :, i, j], ref, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_identity_affine_grid_reproduces_input(mode):
    x = RNG.standard_normal((2, 3, 5, 7))
    theta = pylucid.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1)))
    for align in (False, True):
        grid = F.affine_grid(theta, [2, 3, 5, 7], align_corners=align)
        out = F.grid_sample(pylucid.tensor(x), grid, mode, "border", align).numpy()
        np.testing.assert_allclose(out, x, atol=1e-12)


def test_affine_grid_values_shapes_and_gradcheck():
    theta = _t(RNG.standard_normal((2, 2, 3)))
    grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=True)
    assert tuple(grid.shape) == (2, 3, 4, 2)
    xs, ys = np.linspace(-1, 1, 4), np.linspace(-1, 1, 3)
    th = theta.detach().numpy()
    expect = np.einsum("nij,hwj->nhwi", th, np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1))
    np.testing.assert_allclose(grid.detach().numpy(), expect, atol=1e-12)
    # align_corners=False shrinks the base coordinates to the pixel centres.
    grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=False)
    xs, ys = xs * 3 / 4, ys * 2 / 3
    expect = np.einsum("nij,hwj->nhwi", th, np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1))
    np.testing.assert_allclose(grid.detach().numpy(), expect, atol=1e-12)
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False), (theta,))
    theta3 = _t(RNG.standard_normal((1, 3, 4)))
    assert tuple(F.affine_grid(theta3, (1, 2, 2, 3, 4), align_corners=False).shape) == (1, 2, 3, 4, 3)
    assert gradcheck(lambda t: F.affine_grid(t, (1, 2, 2, 3, 2), align_corners=True), (theta3,))


def test_spatial_transformer_trains_theta():
    """A translation is recovered by gradient descent through affine_grid and grid_sample."""
    yy, xx = np.meshgrid(np.linspace(-1, 1, 12), np.linspace(-1, 1, 12), indexing="ij")
    img = np.exp(-((xx - 0.2) ** 2 + (yy + 0.1) ** 2) / 0.1)[None, None]
    target = np.exp(-((xx) ** 2 + (yy) ** 2) / 0.1)[None, None]
    theta = pylucid.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=pylucid.float64, requires_grad=True)
    opt = pylucid.optim.Adam([theta], lr=0.02)
    x, tgt = pylucid.tensor(img), pylucid.tensor(target)
    for _ in range(150):
        opt.zero_grad()
        out = F.grid_sample(x, F.affine_grid(theta, [1, 1, 12, 12], align_corners=True), align_corners=True)
        loss = ((out - tgt) ** 2).mean()
        loss.backward()
        opt.step()
    t = theta.detach().numpy()[0]
    assert abs(t[0, 2] - 0.2) < 0.03 and abs(t[1, 2] + 0.1) < 0.03


def test_default_align_corners_warns():
    x, g = _t(np.zeros((1, 1, 2, 2)), False), _t(np.zeros((1, 1, 1, 2)), False)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(x, g)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(_t(np.zeros((1, 2, 3)), False), [1, 1, 2, 2])


def test_errors_name_the_op_and_leave_inputs_alone():
    x = pylucid.zeros(1, 1, 3, 3)
    g = pylucid.zeros(1, 2, 2, 2)
    with pytest.raises(pylucid.LucidError, match="mode"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(pylucid.LucidError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode="circular", align_corners=False)
    with pytest.raises(pylucid.ShapeMismatch, match="size 2 in last dimension"):
        F.grid_sample(x, pylucid.zeros(1, 2, 2, 3), align_corners=False)
    with pytest.raises(ValueError, match="batch size"):
        F.grid_sample(x, pylucid.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(pylucid.ShapeMismatch, match="4D or 5D"):
        F.grid_sample(pylucid.zeros(3, 3), g, align_corners=False)
    with pytest.raises(pylucid.ShapeMismatch, match="bicubic"):
        F.grid_sample(pylucid.zeros(1, 1, 2, 2, 2), pylucid.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    with pytest.raises(TypeError, match="same dtype"):
        F.grid_sample(x, g.double(), align_corners=False)
    with pytest.raises(TypeError, match="floating"):
        F.affine_grid(pylucid.zeros(1, 2, 3, dtype=pylucid.int64), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(pylucid.zeros(1, 3, 4), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(pylucid.LucidError, match="4D and 5D"):
        F.affine_grid(pylucid.zeros(1, 2, 3), [1, 2, 2], align_corners=False)
    assert x.tolist() == pylucid.zeros(1, 1, 3, 3).tolist()


# ---- PyTorch's numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("dims,mode,padding,align",
                         [(2, *c) for c in CASES_2D] + [(3, *c) for c in CASES_2D if c[0] != "bicubic"])
def test_matches_torch(dims, mode, padding, align):
    torch = pytest.importorskip("torch")
    shape = (2, 3, 5, 6) if dims == 2 else (2, 2, 4, 3, 5)
    gshape = (2, 4, 3, 2) if dims == 2 else (2, 3, 2, 2, 3)
    xa, ga = RNG.standard_normal(shape).astype(np.float32), RNG.uniform(-1.6, 1.6, gshape).astype(np.float32)
    w = RNG.standard_normal(shape[:2] + gshape[1:-1]).astype(np.float32)
    tx, tg = torch.tensor(xa, requires_grad=True), torch.tensor(ga, requires_grad=True)
    lx, lg = pylucid.tensor(xa, requires_grad=True), pylucid.tensor(ga, requires_grad=True)
    to = torch.nn.functional.grid_sample(tx, tg, mode, padding, align)
    lo = F.grid_sample(lx, lg, mode, padding, align)
    (to * torch.tensor(w)).sum().backward()
    (lo * pylucid.tensor(w)).sum().backward()
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(lg.grad.numpy(), tg.grad.numpy(), atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("size", [[2, 3, 5, 4], [2, 1, 3, 4, 5], [1, 1, 1, 3]])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(size, align):
    torch = pytest.importorskip("torch")
    th = RNG.standard_normal((size[0], len(size) - 2, len(size) - 1)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.nn.functional.affine_grid(torch.tensor(th), size, align).numpy()
        lg = F.affine_grid(pylucid.tensor(th), size, align).numpy()
    np.testing.assert_allclose(lg, t, atol=1e-6)


def test_non_finite_grid_points():
    x = pylucid.tensor(RNG.standard_normal((1, 1, 3, 4)))
    g = pylucid.tensor([[[[float("nan"), 0.0], [1e30, -1e30]]]], dtype=pylucid.float64)
    # border: a NaN coordinate clips to the first pixel, a huge one to the last, as PyTorch
    out = F.grid_sample(x, g, "bilinear", "border", True).numpy()[0, 0, 0]
    xa = x.numpy()[0, 0]
    np.testing.assert_allclose(out, [(xa[1, 0]), xa[0, 3]])
    assert np.isnan(F.grid_sample(x, g, "bilinear", "zeros", True).numpy()[0, 0, 0, 0])
    torch = pytest.importorskip("torch")
    xs = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    gs = np.array([[[[np.nan, 0.0], [1e30, -1e30]], [[0.3, np.nan], [-np.inf, np.inf]]]], dtype=np.float32)
    for mode, padding, align in CASES_2D:
        a = F.grid_sample(pylucid.tensor(xs), pylucid.tensor(gs), mode, padding, align).numpy()
        b = torch.nn.functional.grid_sample(torch.tensor(xs), torch.tensor(gs), mode, padding, align).numpy()
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(np.nan_to_num(a), np.nan_to_num(b), atol=1e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_identity_grid_gradient_picks_torchs_cells(dt, padding):
    """Guards against the grid (and theta) gradient of an identity affine_grid, whose points land
    exactly on pixels, differing from PyTorch's: its 2-D kernel unnormalises with a fused
    multiply-add, so x = 4 of a 20-wide image becomes 4 - 1 ulp and is read from the cell on the
    left (the spatial transformer tutorial's first step starts from the identity)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 20, 17))
    w = rng.standard_normal((2, 3, 20, 17))
    th = np.tile(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), (2, 1, 1))
    grads = []
    for lib in (pylucid, torch):
        t = lib.tensor(th, dtype=getattr(lib, dt), requires_grad=True)
        g = lib.nn.functional.affine_grid(t, (2, 3, 20, 17), align_corners=False)
        y = lib.nn.functional.grid_sample(lib.tensor(x, dtype=getattr(lib, dt)), g, "bilinear", padding,
                                          align_corners=False)
        (y * lib.tensor(w, dtype=getattr(lib, dt))).sum().backward()
        grads.append(t.grad.double().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4 if dt == "float32" else 1e-10, atol=1e-3)
    c = pylucid.tensor([-0.55], dtype=getattr(pylucid, dt))
    assert (c + 1).item() * 10 - 0.5 == 4.0 or dt == "float32"
    assert F.grid_sample(pylucid.arange(20.0, dtype=getattr(pylucid, dt)).reshape(1, 1, 1, 20),
                         pylucid.stack([c, pylucid.zeros(1, dtype=c.dtype)], -1).reshape(1, 1, 1, 2),
                         align_corners=False).item() == pytest.approx(4.0)
