"""Type information: the stub of the extension (python/pylucid/_C.pyi) names exactly what the
module has, and mypy type-checks the package and its examples against it."""
import ast
import pathlib

import pytest

import pylucid
from pylucid import _C

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "python" / "pylucid"
STUB = PKG / "_C.pyi"

pytestmark = pytest.mark.skipif(not STUB.exists(), reason="needs the source tree")


def _stub_names():
    """Module-level names of the stub, and the member names of each class in it."""
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            members[node.name] = names
    return top, members


def _runtime_members(cls):
    """What the class itself defines (the stub lists inherited members under the base class)."""
    plumbing = {"__dict__", "__module__", "__doc__", "__weakref__", "__members__", "__entries",
                "__qualname__", "_pybind11_conduit_v1_"}  # pybind11's, not API
    return set(vars(cls)) - plumbing


def test_stub_names_every_module_attribute():
    """Guards against a binding added or renamed without regenerating the stub (tools/gen_stubs.py):
    editors would not complete it and mypy would reject correct code that uses it."""
    top, _ = _stub_names()
    runtime = {n for n in dir(_C) if not n.startswith("__")}
    assert runtime - top == set(), "in _C but not in _C.pyi: regenerate with tools/gen_stubs.py"
    assert top - runtime - {"_dtype", "__all__"} == set(), "in _C.pyi but no longer in _C"


def test_stub_names_every_tensor_member():
    """Guards against methods of Tensor (C++ ones and those _tensor.py attaches) missing from the
    stub, and against stale stub entries."""
    _, members = _stub_names()
    runtime = _runtime_members(_C.Tensor)
    stub = members["Tensor"]
    assert runtime - stub == set()
    assert stub - runtime == set()


def test_stub_classes_match_their_members():
    """Guards against the backward-node classes (their saved attributes, documented on the
    RMSNormBackward page) and OpSchema drifting from the stub."""
    _, members = _stub_names()
    for name in ("Node", "OpSchema", "RMSNormBackward", "GroupRMSNormBackward", "dtype", "AmpPolicy"):
        runtime = {n for n in _runtime_members(getattr(_C, name)) if not n.startswith("__")}
        stub = {n for n in members[name] if not n.startswith("__")}
        assert runtime == stub, name


def _mypy(paths, tmp_path):
    api = pytest.importorskip("mypy.api")
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(tmp_path / "mypy_cache"), *map(str, paths)])
    return status, out + err


def test_mypy_passes_on_the_package_and_examples(tmp_path):
    """Guards against the stub or the Python sources giving types that contradict how the
    examples (and so users) call the API: mypy --check-untyped-defs must find nothing."""
    status, report = _mypy([PKG], tmp_path)
    assert status == 0, report
    assert "pylucid/examples" not in report
    assert "Success" in report


def test_mypy_catches_misuse(tmp_path):
    """Guards against a stub so loose (everything Any) that the check above proves nothing: real
    mistakes in user code must be reported."""
    bad = tmp_path / "user_code.py"
    bad.write_text(
        "import pylucid as pl\n"
        "x = pl.randn(3, requires_grad=True)\n"
        "x.sum().backward()\n"
        "x.grad.zero_()\n"                 # grad may be None
        "y = pl.relu('not a tensor')\n"    # wrong argument type
        "n: str = x.ndim\n"                # ndim is an int
    )
    status, report = _mypy([bad], tmp_path)
    assert status == 1
    assert 'Item "None" of "Tensor | None" has no attribute "zero_"' in report
    assert 'incompatible type "str"; expected "Tensor"' in report
    assert 'Incompatible types in assignment (expression has type "int"' in report
    assert report.count("error:") == 3


def test_package_is_marked_typed():
    """Guards against py.typed missing from the package: type checkers ignore the stub without it."""
    assert (pathlib.Path(pylucid.__file__).parent / "py.typed").exists()
