"""The ops PyTorch programs reach for beyond the basic math.

Fused C++ ops re-exported under PyTorch's names (remainder, fmod, floor_divide, cumsum, cumprod,
sort, argsort, topk, diagonal, unique, bincount, histc, searchsorted), and composites built from differentiable ops so that they
get gradients of every order for free: einsum (pairwise contractions through matmul with
permutes and reshapes), outer, addmm, baddbmm, diag, trace.

>>> import pylucid
>>> pylucid.remainder(pylucid.tensor([-3, 3]), 2).tolist()
[1, 1]
>>> pylucid.einsum("ij,jk->ik", pylucid.ones(2, 3), pylucid.ones(3, 4)).shape
pylucid.Size([2, 4])
"""
import builtins as _builtins

import numpy as _np

from . import _C

__all__ = ["remainder", "fmod", "floor_divide", "cumsum", "cumprod", "sort", "argsort", "topk", "diagonal",
           "unique", "bincount", "histc", "searchsorted", "einsum", "outer", "ger", "addmm", "baddbmm", "diag",
           "trace"]

remainder = _C.remainder
fmod = _C.fmod
floor_divide = _C.floor_divide
cumsum = _C.cumsum
cumprod = _C.cumprod
sort = _C.sort
argsort = _C.argsort
topk = _C.topk
diagonal = _C.diagonal
bincount = _C.bincount
histc = _C.histc
searchsorted = _C.searchsorted


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The sorted distinct values of ``input`` (flattened), or with ``dim`` the distinct slices
    along that dim; with ``return_inverse`` each element's (slice's) index into them and with
    ``return_counts`` how often each occurs: a tensor, or a tuple when either flag is set."""
    if dim is None:
        return _C.unique(input, sorted, return_inverse, return_counts)
    _check_tensor("unique", "input", input)
    n = max(input.dim(), 1)
    if isinstance(dim, bool) or not isinstance(dim, int) or not -n <= dim < n:
        raise _C.IndexOutOfRange(f"unique: dim {dim!r} out of range for a tensor with {input.dim()} dims")
    dim %= n
    arr = input.detach()
    arr = (arr.float() if arr.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else arr).numpy()
    vals, inv, counts = _np.unique(arr, axis=dim, return_inverse=True, return_counts=True)
    out = _C._from_numpy(_np.asarray(vals, order="C")).to(input.dtype)
    extra = ([_int_tensor(inv.reshape(-1))] if return_inverse else []) + \
        ([_int_tensor(counts)] if return_counts else [])
    return (out, *extra) if extra else out


def _int_tensor(a):
    return _C._from_numpy(_np.asarray(a, dtype=_np.int64, order="C"))


def _check_tensor(op, name, t):
    if not isinstance(t, _C.Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(t).__name__}")


def outer(input, vec2):
    """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j].

    >>> import pylucid
    >>> pylucid.outer(pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 10.0])).tolist()
    [[1.0, 10.0], [2.0, 20.0]]
    """
    _check_tensor("outer", "input", input)
    _check_tensor("outer", "vec2", vec2)
    if input.ndim != 1 or vec2.ndim != 1:
        raise _C.ShapeMismatch(f"outer: expected two 1-D tensors, got shapes {tuple(input.shape)} and "
                               f"{tuple(vec2.shape)}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def ger(input, vec2):
    """Alias of outer."""
    return outer(input, vec2)


def _add_scaled(op, input, prod, beta, alpha):
    _check_tensor(op, "input", input)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # PyTorch: input is ignored (its NaN/inf do not propagate), only its shape broadcasts
        return prod + input.detach() * 0 if input.shape != prod.shape else prod
    return (input if beta == 1 else input * beta) + prod


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) for 2-D mat1 (n, m) and mat2 (m, p); input broadcasts to
    (n, p). With beta=0 input's values are ignored.

    >>> import pylucid
    >>> pylucid.addmm(pylucid.ones(2), pylucid.ones(2, 3), pylucid.ones(3, 2)).tolist()
    [[4.0, 4.0], [4.0, 4.0]]
    """
    _check_tensor("addmm", "mat1", mat1)
    _check_tensor("addmm", "mat2", mat2)
    out = _add_scaled("addmm", input, _C.mm(mat1, mat2), beta, alpha)
    if tuple(out.shape) != (mat1.shape[0], mat2.shape[1]):
        raise _C.ShapeMismatch(f"addmm: input of shape {tuple(input.shape)} does not broadcast to the product's "
                               f"shape {(mat1.shape[0], mat2.shape[1])}")
    return out


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2) for 3-D batch1 (b, n, m) and batch2 (b, m, p); input
    broadcasts to (b, n, p). With beta=0 input's values are ignored.

    >>> import pylucid
    >>> pylucid.baddbmm(pylucid.zeros(2, 1, 1), pylucid.ones(2, 1, 3), pylucid.ones(2, 3, 1)).tolist()
    [[[3.0]], [[3.0]]]
    """
    _check_tensor("baddbmm", "batch1", batch1)
    _check_tensor("baddbmm", "batch2", batch2)
    prod = _C.bmm(batch1, batch2)
    out = _add_scaled("baddbmm", input, prod, beta, alpha)
    if tuple(out.shape) != tuple(prod.shape):
        raise _C.ShapeMismatch(f"baddbmm: input of shape {tuple(input.shape)} does not broadcast to the product's "
                               f"shape {tuple(prod.shape)}")
    return out


def diag(input, diagonal=0):
    """1-D input: a square matrix with input on the given diagonal (offset > 0 above the main one).
    2-D input: its diagonal as a 1-D tensor (a copy).

    >>> import pylucid
    >>> pylucid.diag(pylucid.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    _check_tensor("diag", "input", input)
    if isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise _C.DtypeMismatch(f"diag: diagonal must be an int, got {type(diagonal).__name__}")
    if input.ndim == 2:
        return _C.diagonal(input, diagonal).clone()
    if input.ndim != 1:
        raise _C.ShapeMismatch(f"diag: expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}")
    n, k = input.shape[0], _builtins.abs(diagonal)
    from ._tensor import eye  # noqa: PLC0415  (_tensor is loaded after this module)
    square = input.unsqueeze(0) * eye(n, dtype=input.dtype)  # differentiable in input
    if k == 0:
        return square
    from .nn import functional as F  # noqa: PLC0415  (nn imports the package this module is part of)
    # (left, right, top, bottom): the square block sits k columns right (k > 0) or k rows down.
    return F.pad(square, (k, 0, 0, k) if diagonal > 0 else (0, k, k, 0))


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64).

    >>> import pylucid
    >>> pylucid.trace(pylucid.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    _check_tensor("trace", "input", input)
    if input.ndim != 2:
        raise _C.ShapeMismatch(f"trace: expected a 2-D tensor, got shape {tuple(input.shape)}")
    return _C.diagonal(input).sum()


# ---- einsum --------------------------------------------------------------------------------

def _parse_einsum(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise _C.ShapeMismatch(f"einsum: the equation names {len(terms)} operands, got {len(operands)}")
    ell = "."  # the ellipsis stands for one label per broadcast dim, spelled as private characters
    n_ell = 0
    parsed = []
    for term, t in zip(terms, operands):
        if term.count("...") > 1 or term.replace("...", "").count(".") > 0:
            raise _C.LucidError(f"einsum: invalid subscript '{term}'")
        head, has_ell, tail = term.partition("...")
        for c in head + tail:
            if not c.isalpha():
                raise _C.LucidError(f"einsum: subscripts must be letters, got '{c}' in '{equation}'")
        n_named = len(head) + len(tail)
        if has_ell:
            k = t.ndim - n_named
            if k < 0:
                raise _C.ShapeMismatch(f"einsum: subscript '{term}' has more labels than the operand's {t.ndim} dims")
            n_ell = _builtins.max(n_ell, k)
            labels = list(head) + [(ell, i - k) for i in range(k)] + list(tail)
        else:
            if n_named != t.ndim:
                raise _C.ShapeMismatch(f"einsum: subscript '{term}' names {n_named} dims, the operand has {t.ndim}")
            labels = list(head) + list(tail)
        parsed.append(labels)
    ell_labels = [(ell, i - n_ell) for i in range(n_ell)]  # right-aligned, as broadcasting
    if arrow:
        if rhs.count("...") > 1:
            raise _C.LucidError(f"einsum: invalid output subscript '{rhs}'")
        head, has_ell, tail = rhs.partition("...")
        for c in head + tail:
            if not c.isalpha():
                raise _C.LucidError(f"einsum: subscripts must be letters, got '{c}' in '{equation}'")
        out = list(head) + (ell_labels if has_ell else []) + list(tail)
        seen = [lb for p in parsed for lb in p]
        for c in head + tail:
            if c not in seen:
                raise _C.LucidError(f"einsum: output label '{c}' does not appear in the inputs")
            if (head + tail).count(c) > 1:
                raise _C.LucidError(f"einsum: output label '{c}' appears more than once")
    else:
        counts: dict[str, int] = {}
        for p in parsed:
            for lb in p:
                if not isinstance(lb, tuple):
                    counts[lb] = counts.get(lb, 0) + 1
        out = ell_labels + sorted(c for c, n in counts.items() if n == 1)
    return parsed, out


def _fold_repeats(t, labels):
    """Takes diagonals for labels repeated within one operand ('ii->i')."""
    labels = list(labels)
    while True:
        dup = next((i for i, lb in enumerate(labels) if labels.index(lb) != i), None)
        if dup is None:
            return t, labels
        first = labels.index(labels[dup])
        if t.shape[first] != t.shape[dup]:
            raise _C.ShapeMismatch(f"einsum: label repeated with sizes {t.shape[first]} and {t.shape[dup]}")
        t = _C.diagonal(t, 0, first, dup)  # the diagonal goes last
        lb = labels[first]
        labels = [x for i, x in enumerate(labels) if i not in (first, dup)] + [lb]


def _sum_labels(t, labels, drop):
    dims = [i for i, lb in enumerate(labels) if lb in drop]
    if dims:
        t = t.sum(dim=tuple(dims))
        labels = [lb for lb in labels if lb not in drop]
    return t, labels


def _contract(a, la, b, lb, keep):
    """a (labels la) times b (labels lb), summing the shared labels not in keep, through matmul."""
    batch = [x for x in la if x in lb and x in keep]
    summed = [x for x in la if x in lb and x not in keep]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]
    size: dict[object, int] = {}
    for t, ls in ((a, la), (b, lb)):
        for i, x in enumerate(ls):
            s = t.shape[i]
            if x in size and size[x] != s and 1 not in (size[x], s):
                raise _C.ShapeMismatch(f"einsum: label sizes {size[x]} and {s} do not match or broadcast")
            size[x] = s if x not in size or size[x] == 1 else size[x]
    a2 = a.permute(*[la.index(x) for x in batch + left + summed])
    b2 = b.permute(*[lb.index(x) for x in batch + summed + right])
    bs = [size[x] for x in batch]
    a2 = a2.expand(*bs, *a2.shape[len(batch):]) if batch else a2
    b2 = b2.expand(*bs, *b2.shape[len(batch):]) if batch else b2
    nb, nl, ns, nr = _prod(bs), _prod(size[x] for x in left), _prod(size[x] for x in summed), _prod(size[x] for x in right)
    if summed and any(a.shape[la.index(x)] != b.shape[lb.index(x)] for x in summed):
        a2 = a2.expand(*a2.shape[:len(batch) + len(left)], *[size[x] for x in summed])
        b2 = b2.expand(*b2.shape[:len(batch)], *[size[x] for x in summed], *b2.shape[len(batch) + len(summed):])
    r = _C.matmul(a2.reshape(nb, nl, ns), b2.reshape(nb, ns, nr))
    return r.reshape(*bs, *[size[x] for x in left], *[size[x] for x in right]), batch + left + right


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``. Labels are letters; ``...``
    stands for broadcast dims; without ``->`` the output holds the labels that appear once, sorted.
    Operands may also be passed as one list. Contractions run pairwise through matmul (with
    permutes and reshapes), so the result is differentiable to any order.

    >>> import pylucid
    >>> a = pylucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> pylucid.einsum("ii", a).item(), pylucid.einsum("ij->j", a).tolist()
    (5.0, [4.0, 6.0])
    """
    if not isinstance(equation, str):
        raise _C.DtypeMismatch(f"einsum: the equation must be a string, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise _C.LucidError("einsum: expected at least one operand")
    for i, t in enumerate(operands):
        _check_tensor("einsum", f"operand {i}", t)
    parsed, out = _parse_einsum(equation, operands)
    items = []
    for t, labels in zip(operands, parsed):
        t, labels = _fold_repeats(t, labels)
        items.append((t, labels))
    # Sum labels that appear in one operand only and not in the output, before any product.
    for i, (t, labels) in enumerate(items):
        elsewhere = set(out)
        for j, (_, lj) in enumerate(items):
            if j != i:
                elsewhere.update(lj)
        items[i] = _sum_labels(t, labels, [x for x in labels if x not in elsewhere])
    t, labels = items[0]
    for j in range(1, len(items)):
        keep = set(out)
        for _, lk in items[j + 1:]:
            keep.update(lk)
        t, labels = _contract(t, labels, items[j][0], items[j][1], keep)
    t, labels = _sum_labels(t, labels, [x for x in labels if x not in out])
    perm = [labels.index(x) for x in out]
    if perm != list(range(len(perm))):
        t = t.permute(*perm)
    return t


def _attach():
    for name in ["outer", "ger", "addmm", "baddbmm", "diag", "trace"]:
        fn = globals()[name]

        def method(self, *args, _fn=fn, **kwargs):
            return _fn(self, *args, **kwargs)
        method.__name__ = method.__qualname__ = name
        method.__doc__ = fn.__doc__
        setattr(_C.Tensor, name, method)


_attach()

