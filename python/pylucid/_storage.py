"""Read-only views of a tensor's storage: ``Tensor.untyped_storage()`` (bytes) and the deprecated
``Tensor.storage()`` (elements of the tensor's dtype), as PyTorch's ``UntypedStorage`` and
``TypedStorage``. They answer what scripts ask of a storage (its address, size, element size,
values) and never write to it.

Every view of one base shares a storage, so its ``data_ptr()`` (the storage's start, not the
view's first element) is the same, and two storage objects of one buffer compare equal:

>>> import pylucid
>>> a = pylucid.arange(10.0)
>>> b = a[2:5]
>>> a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
True
>>> a.untyped_storage().nbytes(), b.data_ptr() - b.untyped_storage().data_ptr()
(40, 8)
"""
import ctypes
import warnings

import numpy as np

from ._C import Tensor, dtype

__all__ = ["TypedStorage", "UntypedStorage"]


def _decode(raw, dt):
    """The bytes of a storage as a numpy array of dtype ``dt`` (bfloat16 widened to float32)."""
    if dt == dtype.bfloat16:
        return (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    kind = {dtype.float16: np.float16, dtype.float32: np.float32, dtype.float64: np.float64,
            dtype.int64: np.int64, dtype.bool: np.bool_}[dt]
    return np.frombuffer(raw, dtype=kind)


class UntypedStorage:
    """The bytes a tensor and all its views share (read-only here). ``size()`` and ``len`` count
    bytes; indexing gives a byte's value."""

    def __init__(self, tensor):
        self._tensor = tensor  # keeps the buffer alive while the storage object is
        self._ptr = tensor.data_ptr() - tensor.storage_offset() * tensor.element_size()
        self._nbytes = tensor._storage_nbytes()

    device = property(lambda self: self._tensor.device, doc="The device of the storage (cpu).")

    def data_ptr(self):
        """The address of the storage's first byte (shared by every view of it)."""
        return self._ptr

    def nbytes(self):
        """The storage's size in bytes."""
        return self._nbytes

    def size(self):
        """The storage's size in bytes (as ``nbytes``)."""
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def element_size(self):
        """1: an untyped storage counts bytes."""
        return 1

    def _bytes(self):
        return ctypes.string_at(self._ptr, self._nbytes) if self._nbytes else b""

    def __getitem__(self, index):
        return list(self._bytes())[index]

    def tolist(self):
        """The storage's bytes as a list of ints."""
        return list(self._bytes())

    def is_shared(self):
        """False: pylucid keeps no storage in shared memory."""
        return False

    def type(self):
        return "pylucid.storage.UntypedStorage"

    def __eq__(self, other):
        # PyTorch hands out one storage object per buffer; here equal address and size stand for that.
        return isinstance(other, UntypedStorage) and (self._ptr, self._nbytes) == (other._ptr, other._nbytes)

    def __hash__(self):
        return hash((self._ptr, self._nbytes))

    def __repr__(self):
        body = "".join(f" {v}\n" for v in self.tolist())
        return f"{body}[pylucid.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]"

    __str__ = __repr__


class TypedStorage:
    """A storage seen as elements of the tensor's dtype (PyTorch deprecates it in favour of
    ``untyped_storage()``): ``size()`` and ``len`` count elements, indexing gives an element."""

    def __init__(self, tensor):
        self._untyped = UntypedStorage(tensor)
        self.dtype = tensor.dtype

    device = property(lambda self: self._untyped.device, doc="The device of the storage (cpu).")

    def untyped(self):
        """The underlying :class:`UntypedStorage`."""
        return self._untyped

    def data_ptr(self):
        """The address of the storage's first byte (shared by every view of it)."""
        return self._untyped.data_ptr()

    def nbytes(self):
        """The storage's size in bytes."""
        return self._untyped.nbytes()

    def element_size(self):
        """Bytes per element of ``dtype``."""
        return self.dtype.itemsize

    def size(self):
        """The number of elements the storage holds."""
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def tolist(self):
        """The storage's elements as Python numbers."""
        return _decode(self._untyped._bytes(), self.dtype).tolist()

    def __getitem__(self, index):
        return self.tolist()[index]

    def is_shared(self):
        """False: pylucid keeps no storage in shared memory."""
        return False

    def __repr__(self):
        body = "".join(f" {v}\n" for v in self.tolist())
        return f"{body}[pylucid.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"

    __str__ = __repr__


_warned: list = []


def _untyped_storage(self):
    """The storage this tensor views, as bytes (an :class:`UntypedStorage`; read-only)."""
    return UntypedStorage(self)


def _storage(self):
    """The storage this tensor views, as elements of its dtype (a :class:`TypedStorage`;
    read-only). Deprecated in PyTorch (warns once): use ``untyped_storage()``."""
    if not _warned:
        _warned.append(True)
        warnings.warn("TypedStorage is deprecated (as in PyTorch); use tensor.untyped_storage() instead of "
                      "tensor.storage()", UserWarning, stacklevel=2)
    return TypedStorage(self)


setattr(Tensor, "untyped_storage", _untyped_storage)
setattr(Tensor, "storage", _storage)
