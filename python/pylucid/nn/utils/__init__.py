"""nn utilities: gradient clipping, parameter/vector conversion, (``rnn``) variable-length
sequences for the recurrent layers, (``parametrize``, ``parametrizations``) parametrized
parameters and weight normalisation, (``prune``) pruning by masks."""
from . import parametrizations, parametrize, prune, rnn
from .weight_norm import remove_weight_norm, weight_norm
from .spectral_norm import remove_spectral_norm, spectral_norm
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
