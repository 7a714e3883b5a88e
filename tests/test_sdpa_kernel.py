"""nn.attention.sdpa_kernel / SDPBackend and the backends.cuda attention switches: which settings
let scaled_dot_product_attention run, the errors otherwise, restoring on exit, and PyTorch."""
import warnings

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from pylucid.backends import cuda as cuda_backend
from pylucid.nn.attention import SDPBackend, sdpa_kernel

RNG = np.random.default_rng(3)


def _switches(backend):
    return [backend.flash_sdp_enabled(), backend.math_sdp_enabled(), backend.mem_efficient_sdp_enabled(),
            backend.cudnn_sdp_enabled()]


# The settings a script may choose; each checked for the switches it sets and whether attention runs.
SETTINGS = ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE", "ERROR",
            ["MATH", "FLASH_ATTENTION"], ["EFFICIENT_ATTENTION", "CUDNN_ATTENTION"], []]


def _backends(enum, setting):
    return [getattr(enum, s) for s in setting] if isinstance(setting, list) else getattr(enum, setting)


def _outcome(lib, setting, q, **kw):
    """(what the block yields, the four switches inside it, the output or the error's first sentence)
    for ``lib`` (torch or pylucid)."""
    with lib.nn.attention.sdpa_kernel(_backends(lib.nn.attention.SDPBackend, setting)) as ctx:
        switches = _switches(lib.backends.cuda)
        try:
            result = lib.nn.functional.scaled_dot_product_attention(q, q, q, **kw).numpy()
        except RuntimeError as e:
            result = str(e).split(".")[0]
    return ctx, switches, result


def test_members_match_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend
    assert [(m.name, m.value) for m in SDPBackend] == [(n, int(m.value)) for n, m in TorchBackend.__members__.items()]
    assert repr(SDPBackend.MATH) == repr(TorchBackend.MATH)
    assert torch is not None


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"dropout_p": 0.5}, {"three_d": True}], ids=str)
def test_settings_match_torch(setting, kw):
    torch = pytest.importorskip("torch")
    kw = dict(kw)
    x = RNG.standard_normal((1, 2, 3, 4))
    if kw.pop("three_d", False):
        x = x[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on why its flash kernel was not used
        t_ctx, t_sw, t_res = _outcome(torch, setting, torch.tensor(x), **kw)
    l_ctx, l_sw, l_res = _outcome(pylucid, setting, pylucid.tensor(x), **kw)
    assert l_ctx == t_ctx and l_sw == t_sw
    assert type(l_res) is type(t_res)
    if isinstance(t_res, str):
        assert l_res == t_res
    elif not kw.get("dropout_p"):
        np.testing.assert_allclose(l_res, t_res, rtol=1e-10, atol=1e-12)
    assert _switches(cuda_backend) == [True] * 4


def test_runs_and_restores_without_torch():
    q = pylucid.tensor(RNG.standard_normal((2, 2, 5, 4)))
    ref = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True):
        np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q, is_causal=True).numpy(), ref.numpy())
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        assert _switches(cuda_backend) == [False, False, True, False]
        with pytest.raises(pylucid.LucidError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    with pytest.raises(ValueError), sdpa_kernel(SDPBackend.MATH):
        raise ValueError("the switches are restored when the block raises")
    assert _switches(cuda_backend) == [True] * 4


@pytest.mark.parametrize("bad", [1, "math", None, (SDPBackend.MATH,)], ids=repr)
def test_bad_backends_raise_as_torch(bad):
    with pytest.raises(AssertionError, match=f"got {type(bad).__name__}"):
        sdpa_kernel(bad)


def test_enable_switches_and_deprecated_sdp_kernel():
    q = pylucid.ones(1, 1, 2, 3)
    cuda_backend.enable_math_sdp(False)
    cuda_backend.enable_flash_sdp(False)
    try:
        with pytest.raises(pylucid.LucidError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    finally:
        cuda_backend.enable_math_sdp(True)
        cuda_backend.enable_flash_sdp(True)
    with pytest.warns(FutureWarning, match="sdpa_kernel"):
        ctx = cuda_backend.sdp_kernel(enable_math=False, enable_mem_efficient=False)
    with ctx:
        assert _switches(cuda_backend) == [True, False, False, True]
        assert F.scaled_dot_product_attention(q, q, q, dropout_p=0.0).shape == (1, 1, 2, 3)
        with pytest.raises(pylucid.LucidError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    assert _switches(cuda_backend) == [True] * 4
