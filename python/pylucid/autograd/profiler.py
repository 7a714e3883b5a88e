"""``torch.autograd.profiler``: the older spelling of :mod:`pylucid.profiler`'s ``profile`` and
``record_function`` (same objects)."""
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, profile, record_function  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]
