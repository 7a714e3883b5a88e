"""nn utilities: gradient clipping, parameter/vector conversion, (``rnn``) variable-length
sequences for the recurrent layers, (``parametrize``, ``parametrizations``) parametrized
parameters and weight normalisation, (``prune``) pruning by masks, (``fusion``) folding BatchNorm
into the layer before it, ``skip_init``."""
from . import fusion, parametrizations, parametrize, prune, rnn, stateless
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .weight_norm import remove_weight_norm, weight_norm
from .spectral_norm import remove_spectral_norm, spectral_norm
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grads_with_norm_", "skip_init", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
