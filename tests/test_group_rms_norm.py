"""group_rms_norm / GroupRMSNorm / GroupRMSNormBackward: forward against a numpy scatter-mean
composite, float64 gradcheck for any channel-to-group assignment, (B, C, 1) inputs, the module's
buffers, every bad input, and the seed's formulation written in PyTorch where installed."""
import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid.autograd import GroupRMSNormBackward
from pylucid.nn import functional as F

RNG = np.random.default_rng(2)


def ref_group_rms_norm(x, groups, gamma=None, eps=1e-6):
    """The composite fallback (seed 002): scatter-mean of x^2 per group, gathered back."""
    groups = np.asarray(groups)
    squeeze = x.ndim == 3
    x2 = x[..., 0] if squeeze else x
    G = groups.max() + 1
    sums = np.zeros((x2.shape[0], G))
    np.add.at(sums.T, groups, (x2**2).T)
    ms = sums / np.bincount(groups, minlength=G)
    y = x2 / np.sqrt(ms + eps)[:, groups]
    if gamma is not None:
        y = y * gamma[groups]
    return y[..., None] if squeeze else y


GROUPINGS = {
    "sorted": [0, 0, 1, 1, 2, 2],
    "shuffled": [2, 0, 1, 0, 2, 1],
    "uneven": [1, 1, 1, 0, 1, 2, 1],
    "single_channel_groups": [3, 0, 2, 1],
    "one_group": [0, 0, 0],
}


@pytest.mark.parametrize("name", list(GROUPINGS))
@pytest.mark.parametrize("affine", [True, False])
def test_forward_gradcheck(name, affine):
    """Guards against groups being assumed sorted or equal-sized, the per-group count being
    wrong, and a wrong closed-form gradient for x or the per-group gain."""
    groups = GROUPINGS[name]
    C, G = len(groups), max(groups) + 1
    if affine:
        check_op(lambda x, g: F.group_rms_norm(x, groups, g),
                 lambda x, g: ref_group_rms_norm(x, groups, g), [(3, C), (G,)])
    else:
        check_op(lambda x: F.group_rms_norm(x, groups), lambda x: ref_group_rms_norm(x, groups), [(3, C)])


def test_trailing_singleton_input():
    """Guards against (B, C, 1) input being rejected, squeezed in the output, or its gradient
    losing the trailing dim."""
    groups = [1, 0, 1, 1]
    check_op(lambda x, g: F.group_rms_norm(x, groups, g), lambda x, g: ref_group_rms_norm(x, groups, g),
             [(2, 4, 1), (2,)], check_noncontig=False)
    base = RNG.standard_normal((1, 4, 2))  # transposed: a strided (B, C, 1) view
    x = pylucid.from_numpy(base).transpose(0, 2)
    y = F.group_rms_norm(x, groups)
    assert y.shape == (2, 4, 1)
    np.testing.assert_allclose(np.asarray(y), ref_group_rms_norm(np.asarray(x), groups), rtol=1e-12)


def test_noncontiguous_input_and_ids():
    """Guards against strided inputs or strided group-id tensors being read as contiguous."""
    groups = np.array([0, 9, 1, 9, 0, 9, 1, 9])[::2]  # [0, 1, 0, 1], strided
    ids = pylucid.from_numpy(groups)
    xs = RNG.standard_normal((4, 3)).T  # (3, 4), not contiguous
    y = F.group_rms_norm(pylucid.from_numpy(xs), ids)
    np.testing.assert_allclose(np.asarray(y), ref_group_rms_norm(xs, groups), rtol=1e-12)


def test_empty_batch():
    """Guards against B = 0 crashing or leaving d_gamma uninitialised."""
    x = pylucid.zeros(0, 3, dtype=pylucid.float64, requires_grad=True)
    g = pylucid.ones(2, dtype=pylucid.float64, requires_grad=True)
    y = F.group_rms_norm(x, [0, 1, 1], g)
    assert y.shape == (0, 3) and y.grad_fn.saved_rstd.shape == (0, 2)
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(g.grad), np.zeros(2))


def test_large_input_chunked_backward():
    """Guards against the threaded path (rows in chunks, d_gamma partials combined) dropping or
    repeating rows."""
    groups = RNG.integers(0, 5, size=300)
    groups[:5] = np.arange(5)
    x = RNG.standard_normal((400, 300))
    gam = RNG.standard_normal(5)
    gout = RNG.standard_normal((400, 300))
    xt = pylucid.from_numpy(x.copy()).requires_grad_()
    gt = pylucid.from_numpy(gam.copy()).requires_grad_()
    y = F.group_rms_norm(xt, groups, gt)
    np.testing.assert_allclose(np.asarray(y.detach()), ref_group_rms_norm(x, groups, gam), rtol=1e-12)
    dx, dg = pylucid.autograd.grad(y, (xt, gt), pylucid.from_numpy(gout))
    # closed form in numpy
    G = 5
    n = np.bincount(groups)
    ss = np.zeros((400, G))
    np.add.at(ss.T, groups, (x**2).T)
    r = 1 / np.sqrt(ss / n + 1e-6)
    gy = gout * gam[groups]
    dot = np.zeros((400, G))
    np.add.at(dot.T, groups, (gy * x).T)
    rdx = r[:, groups] * gy - x * (r**3 * dot / n)[:, groups]
    rdg = np.zeros(G)
    np.add.at(rdg, groups, (gout * x * r[:, groups]).sum(0))
    np.testing.assert_allclose(np.asarray(dx), rdx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dg), rdg, rtol=1e-10, atol=1e-10)


def test_grad_fn_attributes():
    """Guards against the node's saved state and schema being unreadable or wrong."""
    x = pylucid.randn(3, 5, requires_grad=True)
    node = F.group_rms_norm(x, [0, 1, 0, 1, 1]).grad_fn
    assert isinstance(node, GroupRMSNormBackward) and node.name() == "GroupRMSNormBackward"
    assert (node.B, node.C, node.G) == (3, 5, 2) and node.saved_rstd.shape == (3, 2)
    assert node.n_channels.tolist() == [2, 3] and node.channel_groups.tolist() == [0, 1, 0, 1, 1]
    s = GroupRMSNormBackward.schema_v1
    assert (s.name, s.version, s.produces_grad) == ("group_rms_norm", 1, True)
    assert s.amp_policy == pylucid._C.AmpPolicy.ForceFP32 and node.schema == s
    assert node.next_functions[1] == (None, 0)
    dx, dg = node.apply(pylucid.ones(3, 5))
    assert dx.shape == (3, 5) and dg is None


def test_ids_are_copied():
    """Guards against later edits of the caller's id array changing a recorded node or module."""
    ids = np.array([0, 1, 1])
    m = pylucid.nn.GroupRMSNorm(ids)
    ids[:] = 0
    assert m.channel_groups.tolist() == [0, 1, 1]


# ---- the module --------------------------------------------------------------------------

def test_module_buffers_and_parameters():
    """Guards against the seed's buffers (channel_groups int64, n_channels per group) and the
    per-group gain drifting, and the module differing from the functional."""
    m = pylucid.nn.GroupRMSNorm([2, 0, 1, 0, 2, 2], eps=1e-5)
    assert m.channel_groups.dtype == pylucid.int64 and m.channel_groups.tolist() == [2, 0, 1, 0, 2, 2]
    assert m.n_channels.dtype == pylucid.int64 and m.n_channels.tolist() == [2, 1, 3]
    assert isinstance(m.gamma, pylucid.nn.Parameter) and m.gamma.shape == (3,)
    assert m.gamma.tolist() == [1.0, 1.0, 1.0] and m.eps == 1e-5
    assert sorted(dict(m.named_buffers())) == ["channel_groups", "n_channels"]
    assert sorted(m.state_dict()) == ["channel_groups", "gamma", "n_channels"]
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(m(pylucid.from_numpy(x)).detach()),
                               ref_group_rms_norm(x.astype(np.float64), [2, 0, 1, 0, 2, 2], eps=1e-5), rtol=1e-5)
    off = pylucid.nn.GroupRMSNorm(pylucid.tensor([0, 0, 1]), affine=False)
    assert off.gamma is None and list(off.parameters()) == []
    assert off(pylucid.randn(2, 3, 1)).shape == (2, 3, 1)
    assert "groups=2" in repr(off)


@pytest.mark.parametrize("groups,match", [
    ([], "empty"),
    ([[0, 1], [1, 0]], "must be 1-D"),
    (3, "must be 1-D"),
    ([0.0, 1.0], "integer group ids"),
    ([True, False], "integer group ids"),
    ([0, -1, 1], "must be >= 0"),
    ([0, 2, 2], "group 1 has no channels"),
    ([0, 5, 1], "ids must cover 0..G-1"),
    ([[0, 1], [1]], "cannot build a tensor"),
])
def test_bad_channel_groups(groups, match):
    """Guards against malformed group assignments (empty, 2-D, non-integer, negative, an unused
    id: an empty group whose gain never trains) being accepted by the module or the function."""
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        pylucid.nn.GroupRMSNorm(groups)
    with pytest.raises(ValueError, match=match):
        F.group_rms_norm(pylucid.randn(2, 3), groups)


@pytest.mark.parametrize("shape,match", [
    ((2, 4), "channel_groups has 3 entries but input"),
    ((3,), r"expected input of shape \(B, C\) or \(B, C, \*spatial\)"),
    ((2, 4, 2), "channel_groups has 3 entries but input"),
])
def test_bad_input_shapes(shape, match):
    """Guards against an input whose channel count or rank does not fit the groups."""
    m = pylucid.nn.GroupRMSNorm([0, 1, 1])
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        m(pylucid.randn(*shape))


def test_bad_weight_eps_dtype():
    """Guards against a gain of the wrong length, negative eps and integer inputs."""
    x = pylucid.randn(2, 3)
    with pytest.raises(pylucid.ShapeMismatch, match=r"weight shape \[3\] does not match the number of groups \[2\]"):
        F.group_rms_norm(x, [0, 1, 1], pylucid.ones(3))
    with pytest.raises(pylucid.ShapeMismatch, match="eps must be >= 0"):
        F.group_rms_norm(x, [0, 1, 1], eps=-1.0)
    with pytest.raises(pylucid.ShapeMismatch, match="eps must be >= 0"):
        pylucid.nn.GroupRMSNorm([0, 1], eps=float("nan"))
    with pytest.raises(pylucid.DtypeMismatch, match="floating input"):
        F.group_rms_norm(pylucid.ones(2, 3, dtype=pylucid.int64), [0, 1, 1])


# ---- PyTorch, where installed ------------------------------------------------------------

@pytest.mark.parametrize("dt,rtol,atol", [("float32", 1e-5, 1e-5), ("float64", 1e-10, 1e-12)])
@pytest.mark.parametrize("three_d", [False, True])
def test_matches_seed_formulation_in_torch(dt, rtol, atol, three_d):
    """Guards against drifting from the seed's GroupRMSNorm (scatter-mean of x^2, sqrt(+eps),
    index_select back, gain gathered by group), written here in torch with index_add."""
    torch = pytest.importorskip("torch")
    groups = [2, 0, 1, 0, 2, 2, 1]
    npdt = np.dtype(dt)
    shape = (5, 7, 1) if three_d else (5, 7)
    x = RNG.standard_normal(shape).astype(npdt)
    gam = RNG.standard_normal(3).astype(npdt)
    gout = RNG.standard_normal(shape).astype(npdt)

    idx = torch.tensor(groups)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(gam, requires_grad=True)
    x2 = tx.squeeze(-1) if three_d else tx
    counts = torch.bincount(idx).to(x2.dtype)
    sums = torch.zeros(x2.shape[0], 3, dtype=x2.dtype).index_add(1, idx, x2**2)
    rms = torch.sqrt(sums / counts + 1e-6)
    ty = x2 / rms.index_select(1, idx) * tg[idx].unsqueeze(0)
    if three_d:
        ty = ty.unsqueeze(-1)
    tdx, tdg = torch.autograd.grad(ty, (tx, tg), torch.tensor(gout))

    px = pylucid.from_numpy(x.copy()).requires_grad_()
    pg = pylucid.from_numpy(gam.copy()).requires_grad_()
    py = F.group_rms_norm(px, groups, pg)
    pdx, pdg = pylucid.autograd.grad(py, (px, pg), pylucid.from_numpy(gout))
    np.testing.assert_allclose(np.asarray(py.detach()), ty.detach().numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(np.asarray(pdx), tdx.numpy(), rtol=rtol, atol=atol * 10)
    np.testing.assert_allclose(np.asarray(pdg), tdg.numpy(), rtol=rtol, atol=atol * 10)


def ref_group_rms_norm_spatial(x, groups, gamma=None, eps=1e-6):
    """Feature maps: one statistic per (sample, group) over the group's channels at every spatial
    position, i.e. the (B, C) composite on x folded to (B * S, C) with the sums taken over S too."""
    groups = np.asarray(groups)
    B, C = x.shape[:2]
    x3 = x.reshape(B, C, -1)
    G = groups.max() + 1
    sums = np.zeros((B, G))
    np.add.at(sums.T, groups, (x3**2).sum(2).T)
    ms = sums / (np.bincount(groups, minlength=G) * x3.shape[2])
    y = x3 / np.sqrt(ms + eps)[:, groups, None]
    if gamma is not None:
        y = y * gamma[groups][None, :, None]
    return y.reshape(x.shape)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 5, 2, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_feature_maps(shape, affine):
    """Guards against feature maps (B, C, *spatial) being rejected, or statistics taken per
    spatial position or per channel instead of per (sample, group) over all positions."""
    groups = [1, 0, 1, 2, 0]
    if affine:
        check_op(lambda x, g: F.group_rms_norm(x, groups, g), lambda x, g: ref_group_rms_norm_spatial(x, groups, g),
                 [shape, (3,)])
    else:
        check_op(lambda x: F.group_rms_norm(x, groups), lambda x: ref_group_rms_norm_spatial(x, groups), [shape])
    x = RNG.standard_normal((3, 5, 1))
    np.testing.assert_array_equal(np.asarray(F.group_rms_norm(pylucid.tensor(x), groups)),
                                  np.asarray(F.group_rms_norm(pylucid.tensor(x[..., 0]), groups))[..., None])
    y = pylucid.nn.GroupRMSNorm(groups)(pylucid.randn(2, 5, 4, 4, requires_grad=True))
    assert y.shape == (2, 5, 4, 4) and y.grad_fn.name() == "GroupRMSNormBackward" and y.grad_fn.S == 16
