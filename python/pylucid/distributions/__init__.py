"""``pylucid.distributions`` (PyTorch's ``torch.distributions``): probability distributions with
``sample``/``rsample``, ``log_prob``, ``entropy`` and ``kl_divergence`` whose values equal
PyTorch's; samples come from pylucid's generator (seeded by :func:`pylucid.manual_seed`).

>>> import pylucid
>>> from pylucid.distributions import Normal, kl_divergence
>>> round(Normal(0.0, 1.0).log_prob(pylucid.tensor(0.0)).item(), 6)
-0.918939
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item()
0.0
"""
from .continuous import MultivariateNormal, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, Independent
from .gamma import Beta, Gamma
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .more import Cauchy, Exponential, Geometric, Laplace, LogNormal

__all__ = ["Bernoulli", "Beta", "Categorical", "Cauchy", "Distribution", "Exponential", "Gamma", "Geometric", "Independent",
           "Laplace", "LogNormal", "MixtureSameFamily", "MultivariateNormal", "Normal", "OneHotCategorical", "Uniform", "kl_divergence",
           "register_kl"]
