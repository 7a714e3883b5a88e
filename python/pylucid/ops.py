"""The op-schema registry: every recordable op declares ``{name, version, amp_policy, produces_grad}``.

>>> import pylucid
>>> s = pylucid.ops.schema("rms_norm")
>>> (s.name, s.version, s.amp_policy.name, s.produces_grad)
('rms_norm', 1, 'ForceFP32', True)
"""
from . import _C

__all__ = ["schema", "schemas", "OpSchema", "AmpPolicy"]

OpSchema = _C.OpSchema
AmpPolicy = _C.AmpPolicy


def schema(name):
    """The registered schema of op ``name``; LucidError when no such op exists."""
    return _C._schema(name)


def schemas():
    """All registered schemas, sorted by name."""
    return list(_C._schemas())
