"""The norms under autocast: ForceFP32 (half inputs computed in float32, float32 output,
float64 never narrowed) and gradients returned to each input in its own dtype."""
import numpy as np
import pylucid
import pytest
from pylucid.nn import functional as F

RNG = np.random.default_rng(4)

NORMS = {
    "rms_norm": (lambda x, w: F.rms_norm(x, 8, w), "rms_norm"),
    "partial": (lambda x, w: F.rms_norm(x, 8, w, partial_ratio=0.25), "rms_norm"),
    "layer_norm": (lambda x, w: F.layer_norm(x, 8, w, w), "layer_norm"),
    "group_rms_norm": (lambda x, w: F.group_rms_norm(x, [0, 1] * 4, w[:2]), "group_rms_norm"),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_schema_is_force_fp32(name):
    """Guards against a norm registered with a policy that would run it in half precision."""
    s = pylucid.ops.schema(NORMS[name][1])
    assert s.amp_policy == pylucid._C.AmpPolicy.ForceFP32 and s.version == 1 and s.produces_grad


@pytest.mark.parametrize("name", list(NORMS))
@pytest.mark.parametrize("ac", ["float16", "bfloat16"])
def test_half_inputs_upcast_and_grads_keep_input_dtypes(name, ac):
    """Guards against a norm under autocast returning half precision, computing from the
    half-rounded statistics, or handing gradients back in float32 to a half input."""
    fn = NORMS[name][0]
    xh = pylucid.from_numpy(RNG.standard_normal((4, 8)).astype(np.float32)).to(getattr(pylucid, ac))
    x = xh.detach().requires_grad_()
    w = pylucid.from_numpy(RNG.standard_normal(8).astype(np.float32)).requires_grad_()
    with pylucid.autocast(dtype=getattr(pylucid, ac)):
        y = fn(x, w)
    assert y.dtype == pylucid.float32
    # the same op on the upcast input, outside autocast, is the reference
    x32 = x.detach().float().requires_grad_()
    w32 = w.detach().clone().requires_grad_()
    y32 = fn(x32, w32)
    np.testing.assert_allclose(np.asarray(y.detach()), np.asarray(y32.detach()), rtol=1e-6, atol=1e-6)
    y.sum().backward()
    y32.sum().backward()
    assert x.grad.dtype == x.dtype and w.grad.dtype == pylucid.float32
    np.testing.assert_allclose(np.asarray(x.grad.float()), np.asarray(x32.grad.to(x.dtype).float()), rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(w.grad), np.asarray(w32.grad), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(NORMS))
def test_float64_is_never_narrowed(name):
    """Guards against ForceFP32 narrowing float64 inputs to float32."""
    fn = NORMS[name][0]
    x = pylucid.randn(4, 8, dtype=pylucid.float64)
    w = pylucid.randn(8, dtype=pylucid.float64)
    with pylucid.autocast():
        assert fn(x, w).dtype == pylucid.float64


@pytest.mark.parametrize("name", list(NORMS))
def test_outside_autocast_half_stays_half(name):
    """Guards against half inputs being upcast when autocast is off (only the accumulation is
    float32; the output keeps the input dtype)."""
    fn = NORMS[name][0]
    x = pylucid.randn(4, 8).half()
    w = pylucid.randn(8).half()
    y = fn(x, w)
    assert y.dtype == pylucid.float16
    ref = fn(x.float(), w.float())
    np.testing.assert_allclose(np.asarray(y.float()), np.asarray(ref), rtol=2e-3, atol=2e-3)


def test_module_under_autocast():
    """Guards against an RMSNorm layer in a mixed-precision model emitting bfloat16 (its float32
    weight must get a float32 gradient, its bfloat16 input a bfloat16 one)."""
    m = pylucid.nn.RMSNorm(8)
    x = pylucid.randn(3, 8).to(pylucid.bfloat16).requires_grad_()
    with pylucid.autocast(dtype=pylucid.bfloat16):
        y = m(x)
    assert y.dtype == pylucid.float32
    y.sum().backward()
    assert x.grad.dtype == pylucid.bfloat16 and m.weight.grad.dtype == pylucid.float32
