"""``pylucid.distributions`` (PyTorch's ``torch.distributions``): probability distributions with
``sample``/``rsample``, ``log_prob``, ``cdf``/``icdf``, ``entropy``, moments, ``support`` and
``arg_constraints`` (see ``constraints``), ``TransformedDistribution`` with the
``transforms``, and ``kl_divergence``. Values equal PyTorch's; samples come from pylucid's
generator (seeded by :func:`pylucid.manual_seed`) drawn as PyTorch draws them, so a seeded program
gets PyTorch's samples.

>>> import pylucid
>>> from pylucid.distributions import Normal, kl_divergence
>>> round(Normal(0.0, 1.0).log_prob(pylucid.tensor(0.0)).item(), 6)
-0.918939
>>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item()
0.0
"""
from . import constraints, transforms
from .constraints import Constraint  # noqa: F401 (PyTorch has it here too)
from .continuous import MultivariateNormal, Normal, Uniform
from .counts import Binomial, ContinuousBernoulli, Multinomial, NegativeBinomial, Poisson
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, Independent
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .mixture import LowRankMultivariateNormal, MixtureSameFamily, VonMises
from .more import Cauchy, Exponential, Geometric, Laplace
from .relaxed import ExpRelaxedCategorical, LogitRelaxedBernoulli
from .transformed import (
                          Gumbel,
                          HalfCauchy,
                          HalfNormal,
                          Kumaraswamy,
                          LogisticNormal,
                          LogNormal,
                          Pareto,
                          RelaxedBernoulli,
                          RelaxedOneHotCategorical,
                          TransformedDistribution,
                          Weibull,
)
from .transforms import (
                          AbsTransform,
                          AffineTransform,
                          ComposeTransform,
                          CumulativeDistributionTransform,
                          ExpTransform,
                          IndependentTransform,
                          LowerCholeskyTransform,
                          PowerTransform,
                          ReshapeTransform,
                          SigmoidTransform,
                          SoftmaxTransform,
                          SoftplusTransform,
                          StickBreakingTransform,
                          TanhTransform,
                          Transform,
                          identity_transform,
)
from .utils import lazy_property  # noqa: F401

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "ContinuousBernoulli", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
           "ExpRelaxedCategorical", "ExpTransform", "Exponential", "FisherSnedecor", "Gamma", "Geometric", "Gumbel",
           "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform", "Kumaraswamy", "Laplace",
           "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "Pareto", "Poisson", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "constraints", "identity_transform",
           "kl_divergence", "register_kl", "transforms"]

from .._submodule_alias import alias_submodules as _alias_submodules  # noqa: E402

# PyTorch's one-file-per-distribution module paths (``from torch.distributions.normal import Normal``).
_alias_submodules(__name__, (
    "bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2", "constraints", "continuous_bernoulli",
    "dirichlet", "distribution", "exponential", "fishersnedecor", "gamma", "geometric", "gumbel", "half_cauchy",
    "half_normal", "independent", "kl", "kumaraswamy", "laplace", "log_normal", "logistic_normal",
    "lowrank_multivariate_normal", "mixture_same_family", "multinomial", "multivariate_normal", "negative_binomial",
    "normal", "one_hot_categorical", "pareto", "poisson", "relaxed_bernoulli", "relaxed_categorical", "studentT",
    "transformed_distribution", "transforms", "uniform", "utils", "von_mises", "weibull"))
