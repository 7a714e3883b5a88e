"""Module backward hooks (``register_full_backward_hook``/``register_full_backward_pre_hook``),
as PyTorch builds them: identity autograd Functions wrap the module's tensor inputs and outputs
for one call. The output identities see ``grad_output``; the input identities see ``grad_input``
and call the hooks once every input gradient of the call has arrived.

NOTE: pylucid runs a multi-output Function's backward once per output, so each wrapped tensor has
its own identity node. A hook can therefore replace ``grad_output`` only when the module has one
differentiable output, and ``grad_input`` only when one input needs a gradient; with more, the
hooks still see every gradient, and a replacement raises LucidError.
"""
from .. import _C
from .._C import Tensor
from ..autograd.function import Function


class _Identity(Function):
    @staticmethod
    def forward(ctx, x, on_grad):
        ctx.on_grad = on_grad
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return ctx.on_grad(grad), None


def _diff(t):
    return isinstance(t, Tensor) and t.requires_grad and t.dtype.is_floating_point


class BackwardHook:
    """The backward-hook state of one module call."""

    def __init__(self, module):
        self.module = module
        self.n_inputs = 0
        self.input_slots: list = []
        self.grad_inputs: list = []
        self.pending = 0
        self.grad_outputs: list = []
        self.n_outputs = 0
        self.pre_done = False

    def setup_inputs(self, args):
        if not _C.is_grad_enabled():
            return args
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(tensor_pos)
        self.grad_inputs = [None] * self.n_inputs
        out = list(args)
        for slot, i in enumerate(tensor_pos):
            if _diff(args[i]):
                self.pending += 1
                self.input_slots.append(slot)
                out[i] = _Identity.apply(args[i], self._input_grad(slot))
        return tuple(out)

    def setup_outputs(self, out):
        if not _C.is_grad_enabled():
            return out
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, (tuple, list)) else None
        if outs is None:
            return out
        self.grad_outputs = [None] * len(outs)
        diff = [i for i, o in enumerate(outs) if _diff(o)]
        self.n_outputs = len(diff)
        for i in diff:
            outs[i] = _Identity.apply(outs[i], self._output_grad(i))
        if single:
            return outs[0]
        return type(out)(outs) if isinstance(out, list) else tuple(outs)

    def _run_pre_hooks(self, replace_ok):
        self.pre_done = True
        for hook in list(self.module._backward_pre_hooks.values()):
            res = hook(self.module, tuple(self.grad_outputs))
            if res is not None:
                if not replace_ok:
                    raise _C.LucidError(f"{self.module._get_name()}: a backward pre-hook can replace grad_output "
                                        "only for a module with one differentiable output")
                res = res if isinstance(res, tuple) else (res,)
                if len(res) != len(self.grad_outputs):
                    raise _C.LucidError(f"{self.module._get_name()}: backward pre-hook returned {len(res)} "
                                        f"gradients, expected {len(self.grad_outputs)}")
                self.grad_outputs = list(res)

    def _run_hooks(self, replace_ok):
        if not self.pre_done:
            self._run_pre_hooks(replace_ok=False)
        for hook in list(self.module._backward_hooks.values()):
            res = hook(self.module, tuple(self.grad_inputs), tuple(self.grad_outputs))
            if res is not None:
                if not replace_ok:
                    raise _C.LucidError(f"{self.module._get_name()}: a full backward hook can replace grad_input "
                                        "only for a module with one input that requires grad")
                res = res if isinstance(res, tuple) else (res,)
                if len(res) != self.n_inputs:
                    raise _C.LucidError(f"{self.module._get_name()}: backward hook returned {len(res)} gradients, "
                                        f"expected {self.n_inputs}")
                self.grad_inputs = list(res)
        # Ready for another backward through the same graph (retain_graph=True).
        self.pending = len(self.input_slots)
        self.pre_done = False

    def _output_grad(self, i):
        def on_grad(grad):
            self.grad_outputs[i] = grad
            if self.n_outputs == 1:
                self._run_pre_hooks(replace_ok=True)
                grad = self.grad_outputs[i]
                if self.pending == 0:  # no input needs a gradient: the hooks see grad_input as Nones
                    self._run_hooks(replace_ok=False)
            return grad
        return on_grad

    def _input_grad(self, slot):
        def on_grad(grad):
            self.grad_inputs[slot] = grad
            self.pending -= 1
            if self.pending == 0:
                self._run_hooks(replace_ok=len(self.input_slots) == 1)
                grad = self.grad_inputs[slot]
                self.grad_inputs = [None] * self.n_inputs
            return grad
        return on_grad
