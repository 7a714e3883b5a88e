"""``pylucid.save(obj, path)`` / ``pylucid.load(path)``: state dicts in a safetensors-compatible
file that runs no code when loaded.

What can be saved: tensors, and dicts (incl. OrderedDict), lists and tuples nesting tensors,
``None``, bools, ints, floats and strings -- e.g. ``model.state_dict()``,
``optimizer.state_dict()``, or ``{"model": ..., "optim": ..., "step": 1200}``. Dict keys may be
strings, ints, floats, bools or None. Tensors are saved detached and contiguous (a Parameter
loads as a plain tensor; one tensor referenced twice loads as one tensor referenced twice).

File format (the safetensors layout, readable by any safetensors loader when the object is a
flat dict of string -> tensor)::

    bytes 0..8        N, the length of the header, unsigned 64-bit little-endian
    bytes 8..8+N      the header: a UTF-8 JSON object, padded with spaces to a multiple of 8
    bytes 8+N..end    the data buffer: every tensor's raw little-endian bytes, back to back

The header maps each tensor's name to ``{"dtype": D, "shape": [...], "data_offsets": [begin,
end]}`` (byte offsets into the data buffer; ``end - begin = numel * itemsize``), with ``D`` one
of ``F16 BF16 F32 F64 I64 BOOL`` (bfloat16 is written as its raw 16-bit patterns, so every
dtype round-trips bit-exactly). Its ``"__metadata__"`` entry (a string -> string map, as
safetensors requires) holds ``"format": "pylucid"`` and ``"pylucid.structure"``: a JSON
encoding of the object in which a tensor appears as ``{"T": name}``, a list as ``{"list":
[...]}``, a tuple as ``{"tuple": [...]}``, a dict as ``{"dict": [[key, value], ...]}`` (an
OrderedDict as ``{"odict": ...}``), a non-finite float as ``{"float": "nan"|"inf"|"-inf"}``, and
None, bools, finite numbers and strings as themselves. For a flat dict of tensors the tensor
names are its keys; nested tensors are named by their path (``state/0/exp_avg``).

A file without ``pylucid.structure`` (written by another safetensors writer) loads as a dict
of name -> tensor; its I8/I16/I32/U8/U16/U32 tensors are widened to int64. Anything malformed
-- a header length past the end of the file, a header that is not a JSON object, an unknown
dtype, offsets outside the data buffer or not matching the shape, a data buffer with unindexed
trailing bytes, a bool byte other than 0/1, a structure naming a missing tensor -- raises
:class:`pylucid.LucidError` naming the problem. Loading never evaluates anything from the file.

>>> import os, tempfile, pylucid
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
>>> pylucid.save({"w": pylucid.arange(3.0), "meta": {"step": 7, "name": "run1"}}, path)
>>> obj = pylucid.load(path)
>>> obj["w"].tolist(), obj["meta"]
([0.0, 1.0, 2.0], {'step': 7, 'name': 'run1'})
"""
import ctypes
import json
import math
import os
import struct
import sys
from collections import OrderedDict
from typing import Any

import numpy as np

from . import _C
from ._C import Tensor, dtype

__all__ = ["load", "save"]

_CODE = {dtype.float16: "F16", dtype.bfloat16: "BF16", dtype.float32: "F32", dtype.float64: "F64",
         dtype.int64: "I64", dtype.bool: "BOOL"}
_DTYPE = {v: k for k, v in _CODE.items()}
# Integer dtypes of other safetensors writers, widened to int64 on load.
_WIDEN = {"I8": np.int8, "I16": np.int16, "I32": np.int32, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32}
_ITEMSIZE = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8, "I64": 8, "BOOL": 1, "I8": 1, "I16": 2, "I32": 4,
             "U8": 1, "U16": 2, "U32": 4}
_STRUCTURE_KEY = "pylucid.structure"
_MAX_HEADER = 100 * 1024 * 1024  # as safetensors: a larger header is a corrupt length field

if sys.byteorder != "little":  # pragma: no cover - pylucid targets little-endian CPUs
    raise ImportError("pylucid.serialization: raw tensor bytes are written little-endian; this CPU is big-endian")


# ---- save --------------------------------------------------------------------------------------


class _Writer:
    def __init__(self):
        self.tensors = OrderedDict()  # name -> contiguous tensor
        self.by_id = {}               # id(tensor) -> name (shared tensors are stored once)
        self.keep = []                # keeps saved tensors alive so ids stay unique

    def name_for(self, t, path):
        if id(t) in self.by_id:
            return self.by_id[id(t)]
        base = "/".join(path) if path else "tensor"
        name, k = base, 1
        while name in self.tensors or name == "__metadata__":
            name, k = f"{base}#{k}", k + 1
        self.tensors[name] = t.detach().contiguous()
        self.by_id[id(t)] = name
        self.keep.append(t)
        return name

    def encode(self, obj, path):
        if isinstance(obj, Tensor):
            return {"T": self.name_for(obj, path)}
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            if math.isfinite(obj):
                return float(obj)
            return {"float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, (list, tuple)):
            tag = "tuple" if isinstance(obj, tuple) else "list"
            return {tag: [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not (k is None or isinstance(k, (str, int, float, bool))):
                    raise _C.LucidError(f"save: dict keys must be str, int, float, bool or None; got a key of "
                                        f"type {type(k).__name__} at {'/'.join(path) or 'the top level'}")
                items.append([self.encode(k, path), self.encode(v, path + [str(k)])])
            return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
        hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
        raise _C.LucidError(f"save: cannot save an object of type {type(obj).__name__}{hint} (at "
                            f"{'/'.join(path) or 'the top level'}); supported: Tensor, dict, list, tuple, "
                            "None, bool, int, float, str")


def _tensor_bytes(t):
    n = t.numel() * t.element_size()
    return ctypes.string_at(t.data_ptr(), n) if n else b""


def _serialize(obj):
    w = _Writer()
    structure = w.encode(obj, [])  # a flat dict's tensors are named by their keys
    header: OrderedDict[str, Any] = OrderedDict()
    header["__metadata__"] = {"format": "pylucid", _STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"))}
    chunks, offset = [], 0
    for name, t in w.tensors.items():
        data = _tensor_bytes(t)
        header[name] = {"dtype": _CODE[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h, chunks


def save(obj, path):
    """Write ``obj`` (tensors nested in dicts/lists/tuples with plain values) to ``path`` (a
    path or a binary file object) in the format described in the module docstring. A path is
    written through a temporary file and renamed, so a crash never leaves a half-written file.

    Raises:
        LucidError: ``obj`` holds a value of another type (a Module, say: save its
            ``state_dict()``), or a dict key that is not a str, int, float, bool or None; the
            message names where in ``obj`` it is.
    """
    head, chunks = _serialize(obj)
    if hasattr(path, "write"):
        path.write(head)
        for c in chunks:
            path.write(c)
        return
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            for c in chunks:
                f.write(c)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# ---- load --------------------------------------------------------------------------------------


def _corrupt(msg, where):
    return _C.LucidError(f"load: {where}: {msg}")


def _read_tensor(name, info, data, where):
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise _corrupt(f"header entry {name!r} must have exactly dtype, shape and data_offsets", where)
    code, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
    if code not in _ITEMSIZE:
        raise _corrupt(f"tensor {name!r} has unsupported dtype {code!r} (expected one of "
                       f"{', '.join(_CODE.values())})", where)
    if (not isinstance(shape, list) or
            not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise _corrupt(f"tensor {name!r} has an invalid shape {shape!r}", where)
    if (not isinstance(offs, list) or len(offs) != 2 or
            not all(isinstance(o, int) and not isinstance(o, bool) for o in offs)):
        raise _corrupt(f"tensor {name!r} has invalid data_offsets {offs!r}", where)
    begin, end = offs
    if not 0 <= begin <= end <= len(data):
        raise _corrupt(f"tensor {name!r} has data_offsets [{begin}, {end}] outside the data buffer of "
                       f"{len(data)} bytes (truncated file?)", where)
    numel = math.prod(shape)
    if end - begin != numel * _ITEMSIZE[code]:
        raise _corrupt(f"tensor {name!r} of dtype {code} and shape {shape} needs {numel * _ITEMSIZE[code]} "
                       f"bytes, but its data_offsets span {end - begin}", where)
    raw = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
    if code in _WIDEN:
        arr = raw.view(np.dtype(_WIDEN[code]).newbyteorder("<")).astype(np.int64).reshape(shape)
        return _C._from_numpy(arr)
    if code == "BOOL" and raw.size and raw.max() > 1:
        raise _corrupt(f"tensor {name!r} of dtype BOOL holds bytes other than 0 and 1", where)
    t = _C._empty(tuple(shape), _DTYPE[code])
    if raw.size:
        ctypes.memmove(t.data_ptr(), raw.ctypes.data, raw.size)
    return t


def _decode(node, tensors, where):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, dict) and len(node) == 1:
        (tag, val), = node.items()
        if tag == "T":
            if val not in tensors:
                raise _corrupt(f"the structure refers to tensor {val!r}, which the header does not hold", where)
            return tensors[val]
        if tag in ("list", "tuple") and isinstance(val, list):
            items = [_decode(v, tensors, where) for v in val]
            return tuple(items) if tag == "tuple" else items
        if tag in ("dict", "odict") and isinstance(val, list):
            out = OrderedDict() if tag == "odict" else {}
            for pair in val:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _corrupt("a dict entry of the structure is not a [key, value] pair", where)
                k = _decode(pair[0], tensors, where)
                try:
                    out[k] = _decode(pair[1], tensors, where)
                except TypeError:
                    raise _corrupt(f"unhashable dict key {k!r} in the structure", where) from None
            return out
        if tag == "float" and val in ("nan", "inf", "-inf"):
            return float(val)
    raise _corrupt(f"unrecognised structure node {json.dumps(node)[:80]}", where)


def _parse(buf, where):
    if len(buf) < 8:
        raise _corrupt(f"file is {len(buf)} bytes, too short for the 8-byte header length (truncated or "
                       "not a pylucid/safetensors file)", where)
    (n,) = struct.unpack("<Q", buf[:8])
    if n > _MAX_HEADER or 8 + n > len(buf):
        raise _corrupt(f"header length {n} exceeds the file size of {len(buf)} bytes (truncated or corrupt "
                       "file)", where)
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _corrupt(f"header is not valid UTF-8 JSON ({e})", where) from None
    if not isinstance(header, dict):
        raise _corrupt(f"header is a JSON {type(header).__name__}, expected an object", where)
    data = buf[8 + n:]
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict):
        raise _corrupt("__metadata__ must be a JSON object", where)
    tensors = OrderedDict()
    max_end = 0
    for name, info in header.items():
        tensors[name] = _read_tensor(name, info, data, where)
        max_end = max(max_end, info["data_offsets"][1])
    if max_end != len(data):
        raise _corrupt(f"the data buffer has {len(data)} bytes but the tensors index only {max_end} "
                       "(corrupt header or trailing garbage)", where)
    if _STRUCTURE_KEY not in meta:
        return dict(tensors)
    try:
        structure = json.loads(meta[_STRUCTURE_KEY])
    except (TypeError, ValueError) as e:
        raise _corrupt(f"the {_STRUCTURE_KEY} metadata is not valid JSON ({e})", where) from None
    return _decode(structure, tensors, where)


def load(path, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read an object written by :func:`save` (or a safetensors file) from ``path`` (a path or
    a binary file object). Tensors come back contiguous, detached and in their saved dtype;
    a file from another safetensors writer loads as a dict of name -> tensor.

    PyTorch's keywords are accepted so ``torch.load(f, map_location="cpu", weights_only=True)``
    runs unchanged: ``map_location`` may name the CPU (or be a callable / dict, ignored, since
    every tensor loads on the CPU); the format never runs code, so ``weights_only`` is always
    satisfied; ``pickle_module`` and ``mmap`` are ignored.

    Raises:
        LucidError: a corrupt or truncated file, naming the problem (nothing in the file is
            ever evaluated).
    """
    if isinstance(map_location, str) or (map_location is not None and not callable(map_location)
                                          and not isinstance(map_location, dict)):
        from ._device import _check_device
        _check_device(map_location, "load")
    if hasattr(path, "read"):
        buf, where = path.read(), getattr(path, "name", "file object")
    else:
        where = os.fspath(path)
        with open(where, "rb") as f:
            buf = f.read()
    return _parse(memoryview(buf), str(where))


# PyTorch's allow-list for ``torch.load(weights_only=True)`` unpickling. pylucid's files hold no
# pickled objects, so nothing needs allowing: the list is kept (scripts add their classes to it
# before loading and may read it back) and changes nothing.
_SAFE_GLOBALS: list = []


def add_safe_globals(safe_globals):
    """Records classes/functions as allowed for ``load`` (PyTorch's API; pylucid's format has
    no pickled objects, so this changes nothing)."""
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals():
    """The objects given to :func:`add_safe_globals`."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Empties the list :func:`add_safe_globals` fills."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager form of :func:`add_safe_globals`: the objects are listed inside the block."""

    def __init__(self, safe_globals):
        self._globals = list(safe_globals)

    def __enter__(self):
        self._n = len(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self._globals)

    def __exit__(self, *exc):
        del _SAFE_GLOBALS[self._n:]
