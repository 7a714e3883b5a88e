"""Regenerates python/pylucid/_C.pyi, the type stub of the extension module.

    pip install pybind11-stubgen
    PYTHONPATH=python PYLUCID_EXT_DIR=build/dev-main python tools/gen_stubs.py

pybind11-stubgen reads the signatures pybind11 writes into each docstring. Its output is then
corrected where introspection cannot know better:
- our ``dtype`` enum is printed as ``numpy.dtype[Any]`` (stubgen's numpy heuristic), and inside
  ``class Tensor`` the name ``dtype`` is the property, so the stub refers to the enum as ``_dtype``;
- Python functions that pylucid attaches to Tensor (``all``, ``backward``, ``size`` ...) look like
  static methods to stubgen, because their first parameter is not called ``self``;
- operators bound with ``py::object`` results (so they can return NotImplemented) return Tensor;
- ``grad`` and ``grad_fn`` may be None;
- Tensor has methods named ``bool``, ``float`` and ``int``-like names and dtype has a member
  ``bool``, so builtin types are spelled ``builtins.bool`` etc.;
- the exception classes, made in C++ with a ``pylucid`` module name, are declared here.
tests/test_typing.py checks that the stub and the module name the same things.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "python", "pylucid", "_C.pyi")

# Binary operators and functions whose binding returns py::object (NotImplemented or a Tensor).
TENSOR_RESULT = {
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__iadd__", "__isub__",
    "__imul__", "__itruediv__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
    "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__invert__",
    "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__neg__",
    "add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge",
}
# Comparisons override object's bool-returning methods, as in numpy's and PyTorch's stubs.
OVERRIDES = {"__eq__", "__ne__"}
IGNORES = {  # stub lines that restate pybind11's runtime behaviour mypy's object model rejects
    "__hash__: typing.ClassVar[None] = None": "assignment",
    "def __eq__(self, arg0: OpSchema) -> builtins.bool:": "override",
}


def generate() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        # pylucid shows Tensor and dtype under the package (``pylucid.Tensor``, as PyTorch prints
        # ``torch.Tensor``); stubgen must see them as the extension's own classes to declare them.
        run = ("import sys, pylucid, pylucid._C as C, pybind11_stubgen\n"
               "C.Tensor.__module__ = C.dtype.__module__ = 'pylucid._C'\n"
               "sys.argv = ['pybind11-stubgen'] + sys.argv[1:]\n"
               "pybind11_stubgen.main()\n")
        subprocess.run([sys.executable, "-c", run, "pylucid._C", "-o", tmp, "--exit-code"], check=True)
        with open(os.path.join(tmp, "pylucid", "_C.pyi")) as f:
            return f.read()


def exception_classes() -> str:
    import pylucid._C as C
    out = []
    for name in ("LucidError", "ShapeMismatch", "DtypeMismatch", "IndexOutOfRange"):
        cls = getattr(C, name)
        bases = ", ".join(b.__name__ for b in cls.__bases__)
        out.append(f"class {name}({bases}):\n    \"\"\"{cls.__doc__}\"\"\"")
    return "\n".join(out)


def fix(text: str) -> str:
    text = text.replace("numpy.dtype[typing.Any]", "_dtype")
    text = re.sub(r"(?m)^from pylucid import \w+\n", "", text)
    text = text.replace("import typing\n", "import builtins\nimport typing\n" + exception_classes() + "\n", 1)
    # Builtin types in annotations: after ':' or '->', inside [] and unions.
    text = re.sub(r"(?<=[:>\[|,] )(bool|int|float)\b(?!\()", r"builtins.\1", text)
    text = re.sub(r"(?<=\[)(bool|int|float)\b", r"builtins.\1", text)
    text = re.sub(r"\(self: [^,)]+", "(self", text)
    out: list[str] = []
    cls = None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"class (\w+)", line)
        if m:
            cls = m.group(1)
        elif line and not line.startswith((" ", "@")):
            cls = None
        if cls == "Tensor" and line.strip() == "@staticmethod":
            continue  # Python functions attached as methods; their first parameter is self
        m = re.match(r"(\s*)def (\w+)\((\w+|\*args)(.*)$", line)
        if m and cls == "Tensor" and lines[i - 1].strip() == "@staticmethod":
            first = "self, *args" if m.group(3) == "*args" else "self"
            line = f"{m.group(1)}def {m.group(2)}({first}{m.group(4)}"
        m = re.match(r"(\s*)def (\w+)\((.*)\) -> typing\.Any:$", line)
        if m and m.group(2) in TENSOR_RESULT:
            ignore = "  # type: ignore[override]" if m.group(2) in OVERRIDES else ""
            line = f"{m.group(1)}def {m.group(2)}({m.group(3)}) -> Tensor:{ignore}"
        for stmt, code in IGNORES.items():
            if line.strip() == stmt:
                line += f"  # type: ignore[{code}]"
        if cls == "Tensor":
            line = line.replace("def grad(self) -> Tensor:", "def grad(self) -> Tensor | None:")
            line = line.replace("def grad_fn(self) -> Node:", "def grad_fn(self) -> Node | None:")
            line = line.replace("def shape(self) -> tuple:", "def shape(self) -> tuple[builtins.int, ...]:")
        out.append(line)
    text = "\n".join(out)
    # The enum under a name that class bodies (Tensor.dtype is a property) do not shadow.
    text = re.sub(r"(\nclass Tensor\b)", r"\n_dtype = dtype\1", text, count=1)
    header = ('"""Type stub of pylucid\'s C++ core. Generated by tools/gen_stubs.py; '
              'edit the bindings, not this file."""')
    return re.sub(r'^"""\n.*?\n"""', header, text, count=1, flags=re.S)


if __name__ == "__main__":
    stub = fix(generate())
    with open(OUT, "w") as f:
        f.write(stub)
    print(f"wrote {os.path.relpath(OUT, ROOT)} ({stub.count(chr(10))} lines)")
