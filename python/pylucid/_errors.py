"""Python-side error types beyond the C++ core's (LucidError, ShapeMismatch, DtypeMismatch,
IndexOutOfRange)."""
from . import _C


class InvalidValue(_C.LucidError, ValueError):
    """An argument outside its allowed range (a learning rate below 0, a probability above 1):
    a LucidError that is also the ValueError PyTorch raises for the same mistake."""
