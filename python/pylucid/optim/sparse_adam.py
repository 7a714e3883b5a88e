"""``SparseAdam``: PyTorch's lazy Adam for sparse gradients. pylucid's gradients are always dense
(``nn.Embedding(sparse=True)`` is refused), so, as PyTorch does for a dense gradient, ``step()``
raises for any parameter that has one and points to ``Adam``; the constructor checks the same
hyperparameters as PyTorch's, so code that builds it for later use still runs."""
from .. import _C
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """PyTorch's ``torch.optim.SparseAdam``: ``step()`` with a (necessarily dense) gradient
    raises ``LucidError("SparseAdam does not support dense gradients, please consider Adam
    instead")``, PyTorch's error."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, _C.Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = lr.item()
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "maximize": maximize})

    def step(self, closure=None):
        """Raises for the first parameter that has a gradient (every pylucid gradient is dense)."""
        loss = self._run_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise _C.LucidError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
