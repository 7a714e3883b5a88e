"""pylucid.jit: PyTorch's torch.jit with TorchScript disabled (PYTORCH_JIT=0): script / trace return
what they are given and run eagerly, the decorators are transparent, fork runs at once, and
save / load refuse with a LucidError that points to state_dict + pylucid.save. Scripted programs
give PyTorch's (compiled) numbers."""
import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from pylucid import jit, nn


def _fused(torch_mod, x, b):
    """The same scripted helpers written against either library's module."""

    @torch_mod.jit.script
    def bias_gelu(bias: torch_mod.Tensor, y: torch_mod.Tensor) -> torch_mod.Tensor:
        z = bias + y
        return z * 0.5 * (1.0 + torch_mod.erf(z / 1.41421356237))

    @torch_mod.jit.script
    def softclip(v: torch_mod.Tensor, limit: float) -> torch_mod.Tensor:
        return limit * torch_mod.tanh(v / limit)

    return softclip(bias_gelu(b, x), 1.5)


def _model(torch_mod, x):
    tnn, tF = torch_mod.nn, torch_mod.nn.functional

    class FFN(tnn.Module):
        hidden: torch_mod.jit.Final[int]

        def __init__(self):
            super().__init__()
            self.hidden = 6
            self.w1 = tnn.Linear(4, 6)
            self.w2 = tnn.Linear(6, 4)

        def forward(self, v):
            return self.w2(tF.silu(self.w1(v)))

        @torch_mod.jit.export
        def gate(self, v):
            return torch_mod.sigmoid(self.w1(v)).mean(-1)

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ffn = torch_mod.jit.script(FFN())
            self.head = tnn.Linear(4, 1)

        def forward(self, v):
            return self.head(v + self.ffn(v)).squeeze(-1)

    torch_mod.manual_seed(0)
    net = Net()
    out = net(x)
    out.pow(2).sum().backward()
    return out, net.ffn.w1.weight.grad, net.ffn.gate(x)


def test_scripted_program_matches_torch():
    """Guards against scripted functions or a scripted submodule giving other numbers (or other
    gradients) than PyTorch's compiled ones."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    ours = _fused(pylucid, pylucid.tensor(x), pylucid.tensor(b))
    theirs = _fused(torch, torch.tensor(x), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    for a, t in zip(_model(pylucid, pylucid.tensor(x)), _model(torch, torch.tensor(x))):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_script_and_trace_return_the_object():
    """Guards against script/trace wrapping (or running) what they are given, which would break
    attribute access, state_dict keys and isinstance checks of the eager module."""
    m = nn.Linear(2, 3)

    def f(v):
        return v * 2

    assert jit.script(m) is m and jit.script(f) is f
    assert jit.trace(m, (pylucid.ones(1, 2),)) is m and jit.trace(f, pylucid.ones(2)) is f
    assert jit.trace_module(m, {"forward": pylucid.ones(1, 2)}) is m
    assert jit.script(nn.Sequential(m)).state_dict().keys() == {"0.weight", "0.bias"}
    assert not isinstance(m, jit.ScriptModule) and not isinstance(f, jit.ScriptFunction)
    assert issubclass(jit.ScriptModule, nn.Module) and issubclass(jit.RecursiveScriptModule, jit.ScriptModule)
    assert isinstance(jit.ScriptModule(), nn.Module)


def test_decorators_and_helpers_are_transparent():
    """Guards against the decorators changing a function, and against is_scripting() being True
    (code that branches on it must take the eager path)."""

    def f(v):
        return v + 1

    assert jit.ignore(f) is f and jit.ignore(drop=True)(f) is f and jit.unused(f) is f
    assert jit.export(f) is f and jit.script_method(f) is f and jit.script_if_tracing(f) is f
    assert jit.is_scripting() is False and jit.is_tracing() is False
    assert jit.Attribute(3, int) == 3 and jit.annotate(list, [1]) == [1]

    class Proto:
        pass

    assert jit.interface(Proto) is Proto
    with pytest.raises(pylucid.LucidError, match="jit.interface"):
        jit.interface(f)
    from typing import Final
    assert jit.Final is Final


def test_fork_runs_the_call_and_wait_returns_its_value():
    """Guards against fork deferring the call or wait returning the Future instead of the value."""
    calls = []

    def g(a, k=1):
        calls.append(a)
        return a * k

    fut = jit.fork(g, pylucid.tensor([2.0]), k=3)
    assert calls and fut.done()
    assert jit.wait(fut).tolist() == [6.0] and fut.value().tolist() == [6.0]
    assert fut.then(lambda f: f.wait() + 1).wait().tolist() == [7.0]
    with pytest.raises(TypeError, match="jit.wait"):
        jit.wait(3)


def test_save_and_load_point_to_state_dict(tmp_path):
    """Guards against jit.save silently writing something jit.load cannot read back, or failing
    with an error that does not say what to do instead."""
    m = jit.script(nn.Linear(2, 2))
    with pytest.raises(pylucid.LucidError, match=r"jit.save: .*pylucid.save\(model.state_dict\(\)"):
        jit.save(m, str(tmp_path / "m.pt"))
    with pytest.raises(pylucid.LucidError, match="jit.load"):
        jit.load(str(tmp_path / "m.pt"))


def test_torch_jit_resolves_under_the_alias():
    """Guards against `import torch.jit` / `from torch.jit import script` failing under as_torch."""
    import subprocess
    import sys
    code = ("from pylucid import as_torch; as_torch.install()\n"
            "import torch.jit\nfrom torch.jit import script, Final\nimport pylucid\n"
            "assert torch.jit is pylucid.jit and script is pylucid.jit.script\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_scripted_function_trains_like_eager():
    """Guards against a scripted activation losing the autograd graph."""
    @jit.script
    def act(v):
        return F.silu(v) * 2

    x = pylucid.randn(3, requires_grad=True)
    act(x).sum().backward()
    expected = (pylucid.sigmoid(x) * (1 + x * (1 - pylucid.sigmoid(x))) * 2).detach()
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-6)


def test_container_isinstance_and_the_switches():
    """Guards against jit.isinstance ignoring container contents (PyTorch checks them eagerly)
    and against the fuser / optimizer switches programs set up front being missing."""
    from typing import Dict, List, Optional, Tuple
    cases = [([1, 2], List[int], True), ([1, "a"], List[int], False), ({"a": pylucid.ones(1)},
             Dict[str, pylucid.Tensor], True), ((1, 2.0), Tuple[int, float], True), (None, Optional[int], True),
             ((1, 2, 3), Tuple[int, ...], True), (1.0, int, False), ([], List[str], True)]
    for obj, t, expected in cases:
        assert jit.isinstance(obj, t) is expected, (obj, t)
    with jit.optimized_execution(False), jit.fuser("fuser1"):
        pass
    with pytest.raises(pylucid.LucidError, match="jit.fuser"), jit.fuser("turbo"):
        pass
    old = jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert old == [("STATIC", 2), ("DYNAMIC", 10)] and jit.set_fusion_strategy(old) == [("DYNAMIC", 3)]
    assert jit.onednn_fusion_enabled() is False
    assert issubclass(jit.Error, Exception) and not issubclass(jit.Error, RuntimeError)
