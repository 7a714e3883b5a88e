"""The random draws the samplers need (a permutation, integers, weighted choices), from
pylucid's generator so that ``pylucid.manual_seed`` makes shuffling reproducible. A
``generator=`` object is used when pylucid's random functions accept it."""
import numpy as np

from ... import _C


def _uniform(n, generator):
    import pylucid

    if n == 0:
        return np.zeros(0)
    if generator is not None:
        try:
            return pylucid.rand(n, generator=generator, dtype=pylucid.float64).numpy()
        except TypeError:
            if not hasattr(generator, "manual_seed"):
                raise _C.DtypeMismatch(f"generator must be a pylucid.Generator, got {type(generator).__name__}") \
                    from None
    return pylucid.rand(n, dtype=pylucid.float64).numpy()


def randperm(n, generator=None):
    """A random permutation of ``range(n)`` as a list of ints."""
    import pylucid

    if hasattr(pylucid, "randperm"):
        try:
            kw = {"generator": generator} if generator is not None else {}
            return pylucid.randperm(n, **kw).tolist()
        except TypeError:
            pass
    return np.argsort(_uniform(n, generator), kind="stable").tolist()


def randint(high, size, generator=None):
    """``size`` ints uniform in ``[0, high)``."""
    return np.minimum((_uniform(size, generator) * high).astype(np.int64), high - 1).tolist()


def choice(weights, num_samples, replacement, generator=None):
    """``num_samples`` indices drawn with probability proportional to ``weights``."""
    w = np.asarray(weights, dtype=np.float64)
    if not replacement and num_samples > int((w > 0).sum()):
        raise _C.LucidError("WeightedRandomSampler: cannot draw more samples than non-zero weights without "
                            "replacement")
    out = []
    w = w.copy()
    if replacement:
        cdf = np.cumsum(w / w.sum())
        u = _uniform(num_samples, generator)
        return np.minimum(np.searchsorted(cdf, u, side="right"), len(w) - 1).tolist()
    for _ in range(num_samples):
        cdf = np.cumsum(w / w.sum())
        i = int(min(np.searchsorted(cdf, _uniform(1, generator)[0], side="right"), len(w) - 1))
        out.append(i)
        w[i] = 0.0
    return out


def seed_draw(generator=None):
    """One int64 seed in ``[0, 2**63)`` drawn as PyTorch's ``torch.empty((), dtype=torch.int64)
    .random_()`` does (one 64-bit draw from ``generator`` or the global generator)."""
    import pylucid

    t = pylucid.empty((), dtype=pylucid.int64)
    return int((t.random_(generator=generator) if generator is not None else t.random_()).item())


def epoch_generator(generator=None):
    """The generator one shuffled pass draws from: ``generator`` itself, or (as PyTorch's
    RandomSampler) a fresh Generator seeded from the global generator."""
    import pylucid

    if generator is not None:
        return generator
    return pylucid.Generator().manual_seed(seed_draw())
