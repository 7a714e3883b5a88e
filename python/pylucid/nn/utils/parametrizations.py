"""Parametrizations built on :mod:`pylucid.nn.utils.parametrize`, as PyTorch's
``torch.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal``."""
import numpy as np

from ..._C import Tensor
from ..._C import cat
from ..._linalg_decomp import householder_product, matrix_exp
from ..._random import randn
from ..._tensor import eye, from_numpy, zeros
from ...autograd.grad_mode import no_grad
from ...linalg import solve
from .._functional_act_ext import normalize
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 (PyTorch's name)
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v``
    (over everything when ``dim`` is -1)."""
    if dim == -1:
        return v.norm(pow)
    dim %= v.dim()
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return v.transpose(0, dim).reshape(v.shape[dim], -1).norm(pow, 1).reshape(shape)


def _weight_norm(v, g, dim):
    """``v * (g / ||v||)``, the norm taken over every dim but ``dim`` (PyTorch's ``_weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes ``module.<name>`` as ``g * v / ||v||`` (the norm over every dim but ``dim``):
    parameters ``parametrizations.<name>.original0`` (g) and ``original1`` (v). Returns ``module``."""
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---- spectral_norm --------------------------------------------------------------------------

class _SpectralNorm(Module):
    """``weight / sigma`` with ``sigma`` the largest singular value of ``weight`` (seen as a matrix
    with ``dim`` first), estimated by power iteration on the buffers ``_u`` and ``_v`` (15 steps
    at registration, ``n_power_iterations`` per forward in training mode; ``u`` first, then
    ``v``, as PyTorch). A 1-d weight is just normalised."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Registers a spectral-norm parametrization on ``module.<name>``: state_dict keys
    ``parametrizations.<name>.original``, ``parametrizations.<name>.0._u`` and ``._v``
    (``dim`` defaults to 0, 1 for transposed convolutions). Returns ``module``."""
    from .spectral_norm import _default_dim
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ------------------------------------------------------------------------------

_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(A):
    """The Q factor of A = QR (A tall) with diag(R) made non-negative (no gradient)."""
    a = A.detach().numpy()
    Q, R = np.linalg.qr(a)
    d = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    d = np.where(d == 0, 1.0, d)
    return from_numpy(np.ascontiguousarray(Q * d[..., None, :])).to(A.dtype)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(np.finfo(Q.detach().numpy().dtype).eps)
    QtQ = (Q.transpose(-2, -1) @ Q).detach().numpy()
    return bool(np.allclose(QtQ, np.eye(k), rtol=1e-5, atol=eps))


class _Orthogonal(Module):
    """PyTorch's orthogonal parametrization: a tall ``X`` (transposed when wide) maps to an
    orthogonal ``Q`` by the exponential or the Cayley map of the skew-symmetric part of its lower
    triangle, or by the Householder reflections stored below its diagonal; with
    ``use_trivialization`` the result is left-multiplied by the buffer ``base`` (the orthogonal
    matrix last assigned), so ``original`` starts at ``-I``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, zeros(*X.shape[:-2], n, n - k, dtype=X.dtype)], -1)
            A = X - X.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = solve(Id - A * 0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)
            # X's diagonal holds the signs (+-1) of Q's columns; not differentiated (cast to int).
            Q = Q * X.diagonal(0, -2, -1).detach().trunc().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {tuple(Q.shape)}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # Householder: the reflections of Q's QR factorisation with R's diagonal made
                # positive, and those signs stored on the diagonal.
                A = _householder_vectors(Q)
                return A.transpose(-2, -1) if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                N = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, N], -1))
            self.base = Q
            neg_Id = zeros(*Q_init.shape, dtype=Q_init.dtype)
            neg_Id.diagonal(0, -2, -1).fill_(-1.0)
            return neg_Id


def _householder_vectors(Q):
    """LAPACK geqrf's packed reflections of a tall Q (below the diagonal) and, on the diagonal,
    the signs that make the Householder map reproduce Q's orthonormal factor."""
    a = Q.detach().numpy()
    raw = np.linalg.qr(a, mode="raw")[0]  # geqrf output, column-major: (..., n, m)
    A = np.ascontiguousarray(np.swapaxes(raw, -1, -2))
    tau = np.linalg.qr(a, mode="raw")[1]
    diag = np.sign(np.diagonal(A, axis1=-2, axis2=-1)).copy()
    diag = np.where(tau == 0.0, -diag, diag)
    out = A.copy()
    k = min(out.shape[-2], out.shape[-1])
    idx = np.arange(k)
    out[..., idx, idx] = diag
    return from_numpy(out).to(Q.dtype)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Registers an orthogonal parametrization on ``module.<name>`` (a matrix or batch of them):
    ``orthogonal_map`` ``"matrix_exp"`` (default for square), ``"cayley"`` or ``"householder"``
    (default otherwise). With ``use_trivialization`` (default) the state_dict holds
    ``parametrizations.<name>.original`` and ``parametrizations.<name>.0.base``. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, orth, unsafe=True)
    return module
