"""Module API parity with PyTorch: forward/backward hooks, get_submodule/get_parameter,
load_state_dict's named tuple, ParameterList/ParameterDict, named_* keywords, Module.to and
print(model) output."""
import pickle
from collections import OrderedDict

import pylucid
import pytest
from pylucid import nn

from pylucid.testing import assert_close


def _mlp(torch_like):
    n = torch_like.nn
    return n.Sequential(n.Linear(3, 4), n.ReLU(), n.Linear(4, 2))


def test_forward_pre_hook_replaces_args_and_handle_removes():
    """Guards against pre-hooks whose return value is ignored or that survive remove()."""
    lin = nn.Identity()
    h = lin.register_forward_pre_hook(lambda m, args: args[0] * 2)  # a bare value is wrapped in a tuple
    assert lin(pylucid.ones(2)).tolist() == [2.0, 2.0]
    h.remove()
    h.remove()  # a second remove does nothing
    assert lin(pylucid.ones(2)).tolist() == [1.0, 1.0]


def test_forward_hooks_order_prepend_kwargs_and_replacement():
    """Guards against hooks run out of order, prepend ignored, or kwargs not passed."""
    calls = []

    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_hook(lambda mod, args, out: calls.append("a"))
    m.register_forward_hook(lambda mod, args, out: calls.append("b"), prepend=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["factor"], with_kwargs=True)

    def pre(mod, args, kwargs):
        return args, {"factor": kwargs["factor"] * 10}
    m.register_forward_pre_hook(pre, with_kwargs=True)
    y = m(pylucid.ones(2), factor=0.5)
    assert calls == ["b", "a"]
    assert y.tolist() == [10.0, 10.0]  # 1 * 5 + 5


def test_forward_hook_always_call_runs_on_error():
    """Guards against always_call hooks skipped when forward raises."""
    seen = []

    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Bad()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("never"))
    with pytest.raises(ValueError, match="boom"):
        m(pylucid.ones(1))
    assert seen == [None]


def test_full_backward_hook_sees_and_replaces_grad_input():
    """Guards against backward hooks that see the wrong gradients or cannot replace grad_input."""
    lin = nn.Linear(2, 1)
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append((grad_input[0].shape, grad_output[0].shape))
        return (grad_input[0] * 0,)
    lin.register_full_backward_hook(hook)
    x = pylucid.ones(3, 2, requires_grad=True)
    lin(x).sum().backward()
    assert seen == [((3, 2), (3, 1))]
    assert x.grad.tolist() == [[0.0, 0.0]] * 3
    assert lin.weight.grad.tolist() == [[3.0, 3.0]]  # parameter grads are untouched


def test_full_backward_pre_hook_scales_grad_output():
    """Guards against a pre-hook's grad_output replacement not reaching the parameters."""
    lin = nn.Linear(2, 1)
    lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
    lin(pylucid.ones(4, 2)).sum().backward()
    assert lin.weight.grad.tolist() == [[12.0, 12.0]]
    assert lin.bias.grad.tolist() == [12.0]


def test_backward_hook_without_input_grad_and_torch_numbers():
    """Guards against backward hooks that never fire when the input needs no gradient (the
    first layer of a model), and checks the gradients against PyTorch."""
    torch = pytest.importorskip("torch")
    out = {}
    for lib in (pylucid, torch):
        lib.manual_seed(0)
        m = _mlp(lib)
        seen = []
        m[2].register_full_backward_hook(lambda mod, gi, go: seen.append([g.sum().item() for g in gi]))
        m[0].register_full_backward_hook(lambda mod, gi, go: seen.append([g is None for g in gi]))
        m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        m(lib.ones(5, 3)).square().sum().backward()
        out[lib.__name__] = (seen, m[0].weight.grad.tolist())
    p, t = out["pylucid"], out["torch"]
    assert p[0][1] == t[0][1] == [True]
    assert_close(pylucid.tensor(p[0][0]), pylucid.tensor(t[0][0]), rtol=1e-5, atol=1e-6)
    assert_close(pylucid.tensor(p[1]), pylucid.tensor(t[1]), rtol=1e-5, atol=1e-6)


def test_get_submodule_parameter_buffer():
    """Guards against dotted-path lookups that return the wrong object or raise the wrong type."""
    m = nn.Sequential(OrderedDict(enc=nn.Sequential(nn.Linear(2, 2)), norm=nn.LayerNorm(2)))
    m.enc.register_buffer("steps", pylucid.zeros(1))
    assert m.get_submodule("") is m
    assert m.get_submodule("enc.0") is m.enc[0]
    assert m.get_parameter("enc.0.weight") is m.enc[0].weight
    assert m.get_buffer("enc.steps") is m.enc.steps
    with pytest.raises(AttributeError, match="has no attribute `x`"):
        m.get_submodule("enc.x")
    with pytest.raises(AttributeError, match="is not a parameter"):
        m.get_parameter("enc.steps")
    with pytest.raises(AttributeError, match="is not an nn.Module"):
        m.get_submodule("enc.0.weight")


def test_load_state_dict_returns_named_tuple():
    """Guards against load_state_dict returning a plain tuple without PyTorch's field names."""
    m = _mlp(pylucid)
    r = m.load_state_dict(m.state_dict())
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert repr(r) == "<All keys matched successfully>"
    sd = m.state_dict()
    sd.pop("0.bias")
    sd["extra"] = pylucid.zeros(1)
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == ["0.bias"] and r.unexpected_keys == ["extra"]
    missing, unexpected = r
    assert missing == ["0.bias"]
    with pytest.raises(pylucid.LucidError, match=r'Missing key\(s\) in state_dict: "0.bias"'):
        m.load_state_dict(sd)


def test_load_state_dict_assign_takes_the_tensors():
    """Guards against assign=True copying instead of taking the given tensors."""
    m = nn.Linear(2, 2)
    w = pylucid.ones(2, 2)
    m.load_state_dict({"weight": w, "bias": pylucid.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    w.add_(1)
    assert m.weight.tolist() == [[2.0, 2.0], [2.0, 2.0]]  # shares memory with w


def test_named_parameters_keywords():
    """Guards against prefix/recurse/remove_duplicate being ignored."""
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, shared)
    assert [n for n, _ in m.named_parameters(prefix="net")] == ["net.0.weight", "net.0.bias"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "1.weight", "1.bias"]
    assert list(m.named_parameters(recurse=False)) == []
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1"]


def test_parameter_list_and_dict():
    """Guards against container parameters missing from parameters()/state_dict()."""
    pl = nn.ParameterList([nn.Parameter(pylucid.ones(2)), pylucid.zeros(3)])
    pl.append(pylucid.ones(1))
    assert len(pl) == 3 and all(isinstance(p, nn.Parameter) for p in pl)
    assert list(pl.state_dict()) == ["0", "1", "2"]
    pd = nn.ParameterDict({"b": pylucid.ones(2), "a": nn.Parameter(pylucid.zeros(1))})
    assert list(pd) == ["a", "b"]  # a plain dict is added in sorted order, as PyTorch
    pd["c"] = pylucid.ones(1)
    assert "c" in pd and len(list(pd.parameters())) == 3
    assert pd.pop("c").shape == (1,)

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pl, self.pd = pl, pd
    assert [n for n, _ in Holder().named_parameters()] == ["pl.0", "pl.1", "pl.2", "pd.a", "pd.b"]
    with pytest.raises(TypeError):
        nn.ParameterList([3])


def test_parameter_containers_print_as_torch():
    """Guards against ParameterDict entries printing the dtype (``[pylucid.float32 of size 2]``)
    where PyTorch prints the legacy type (``[torch.FloatTensor of size 2]``); ParameterList
    prints the dtype in both."""
    pl = nn.ParameterList([nn.Parameter(pylucid.ones(2, 3))])
    assert repr(pl) == "ParameterList(  (0): Parameter containing: [pylucid.float32 of size 2x3])"
    pd = nn.ParameterDict({"w": nn.Parameter(pylucid.ones(2, dtype=pylucid.float64))})
    assert repr(pd) == "ParameterDict(  (w): Parameter containing: [pylucid.DoubleTensor of size 2])"


def test_module_to_and_mode_switches():
    """Guards against Module.to rejecting PyTorch's device/dtype forms or train() not returning self."""
    m = nn.Linear(2, 2)
    assert m.to("cpu") is m and m.to(pylucid.device("cpu"), pylucid.float64) is m
    assert m.weight.dtype == pylucid.float64
    m.to(pylucid.zeros(1))
    assert m.weight.dtype == pylucid.float32
    with pytest.raises(pylucid.LucidError, match="cuda"):
        m.to("cuda")
    with pytest.raises(pylucid.LucidError):
        m.cuda()
    assert m.train() is m and m.eval() is m and not m.training
    with pytest.raises(ValueError):
        m.train("yes")
    m(pylucid.ones(1, 2, dtype=pylucid.float32)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    m.zero_grad()
    assert m.weight.grad is None


def test_pickle_module_with_hooks_state():
    """Guards against pickled modules losing their hook registries (calling them would fail)."""
    m = pickle.loads(pickle.dumps(_mlp(pylucid)))
    assert m(pylucid.ones(1, 3)).shape == (1, 2)
    m.register_forward_hook(lambda *a: None)
    assert m(pylucid.ones(1, 3)).shape == (1, 2)


def test_print_model_matches_torch():
    """Guards against print(model) drifting from PyTorch's format (indentation, repeated
    blocks in ModuleList, extra_repr of the common layers)."""
    torch = pytest.importorskip("torch")

    def build(lib):
        n = lib.nn

        class Net(n.Module):
            def __init__(self):
                super().__init__()
                self.emb = n.Embedding(10, 4, padding_idx=0)
                self.blocks = n.ModuleList([n.Sequential(n.Linear(4, 4), n.GELU(), n.Dropout(0.1))
                                            for _ in range(3)] + [n.LayerNorm(4)])
                self.heads = n.ModuleDict({"cls": n.Linear(4, 2, bias=False), "act": n.LeakyReLU(0.2)})
                self.params = n.ParameterList([n.Parameter(lib.ones(2, 3))])
                self.empty = n.Sequential()
        return Net()
    assert repr(build(pylucid)) == repr(build(torch)).replace("torch.", "pylucid.")
    assert repr(nn.LayerNorm(3, elementwise_affine=False)) == repr(torch.nn.LayerNorm(3, elementwise_affine=False))


def test_small_tensor_gaps():
    """Guards against the Tensor/functional names scripts reach for being missing."""
    x = pylucid.tensor([[3.0, 4.0], [1.0, -2.0]])
    assert pylucid.linalg.vector_norm(x, dim=1).tolist() == [5.0, pytest.approx(5 ** 0.5)]
    assert pylucid.linalg.norm(x).item() == pytest.approx(30 ** 0.5)
    assert pylucid.linalg.vector_norm(x, float("inf")).item() == 4.0
    # ord=2 over a matrix is its spectral norm (the largest singular value), as in PyTorch.
    assert pylucid.linalg.norm(x, ord=2).item() == pytest.approx(pylucid.linalg.svdvals(x)[0].item())
    assert x.int().dtype == pylucid.int64
    assert_close(x.reciprocal(), 1.0 / x)
    s, m = pylucid.std_mean(x, dim=1)
    assert_close(s, x.std(dim=1))
    assert_close(m, x.mean(dim=1))
    v, _ = pylucid.var_mean(x, unbiased=False)
    assert_close(v, x.var(correction=0))
    y = nn.functional.softmax(x, dim=-1, dtype=pylucid.float64)
    assert y.dtype == pylucid.float64
    assert nn.functional.log_softmax(x, 1, dtype=pylucid.float64).dtype == pylucid.float64


def test_nn_modules_utils_helpers_and_consume_prefix():
    """Guards against ``from torch.nn.modules.utils import _pair`` (custom conv layers) and
    ``consume_prefix_in_state_dict_if_present`` (loading a DataParallel checkpoint) failing to
    import, and against that module shadowing ``nn.utils``."""
    from pylucid.nn.modules.utils import (_list_with_default, _pair, _reverse_repeat_tuple, _single, _triple,
                                          consume_prefix_in_state_dict_if_present)

    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2) and _single(2) == (2,) and _triple(1) == (1, 1, 1)
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default([None, 4], [8, 5, 6]) == [5, 4]
    assert nn.utils.clip_grad_norm_ is not None and nn.modules.utils._pair is _pair
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    sd = OrderedDict(("module." + k, v) for k, v in model.state_dict().items())
    sd["head.scale"] = pylucid.ones(1)
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == ["head.scale", "0.weight", "0.bias", "2.weight", "2.bias"]
    del sd["head.scale"]
    assert not model.load_state_dict(sd).missing_keys


def _state_dict_protocol(lib):
    """Runs the state_dict protocol a checkpoint-migration script uses on ``lib`` (pylucid or
    torch); returns what it observed."""
    seen = []

    class Counter(lib.nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.count = 0

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            seen.append(("load", prefix, dict(local_metadata)))
            if prefix + "old_weight" in state_dict:
                state_dict[prefix + "lin.weight"] = state_dict.pop(prefix + "old_weight")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                          error_msgs)

    m = lib.nn.Sequential(Counter())
    m[0].count = 5
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(("pre", prefix, keep_vars)))
    m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: seen.append(("post", prefix, sorted(sd))))
    sd = m.state_dict()
    out = {"keys": list(sd), "extra": sd["0._extra_state"], "metadata": dict(sd._metadata)}
    sd["0.old_weight"] = sd.pop("0.lin.weight") * 0 + 1
    m2 = lib.nn.Sequential(Counter())
    m2[0].lin.register_load_state_dict_pre_hook(
        lambda mod, sd_, prefix, *rest: seen.append(("load-pre", prefix, sorted(sd_))))
    m2.register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.clear())
    sd["ignored"] = lib.zeros(1)
    out["result"] = repr(m2.load_state_dict(sd))
    out["count"] = m2[0].count
    out["weight"] = m2[0].lin.weight.tolist()
    out["seen"] = seen
    return out


def test_state_dict_protocol_extra_state_metadata_and_hooks():
    """Guards against the state_dict protocol that checkpoint-migration code relies on missing:
    get_extra_state/set_extra_state (``_extra_state`` entries), ``_metadata`` versions, a
    ``_load_from_state_dict`` override renaming an old key, and the state_dict / load hooks."""
    out = _state_dict_protocol(pylucid)
    assert out["keys"] == ["0._extra_state", "0.lin.weight", "0.lin.bias"] and out["extra"] == {"count": 5}
    assert out["metadata"] == {"": {"version": 1}, "0": {"version": 2}, "0.lin": {"version": 1}}
    assert out["result"] == "<All keys matched successfully>" and out["count"] == 5
    assert out["weight"] == [[1.0, 1.0], [1.0, 1.0]]
    assert ("load", "0.", {"version": 2}) in out["seen"] and ("pre", "0.", False) in out["seen"]
    lin = nn.Linear(2, 2)
    h = lin.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="must return None"):
        lin.state_dict()
    h.remove()
    assert list(lin.state_dict()) == ["weight", "bias"]
    torch = pytest.importorskip("torch")
    assert out == _state_dict_protocol(torch)
