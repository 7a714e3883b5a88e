"""The documentation: the Sphinx site builds warning-free, its examples and every docstring
example run, every public name has a docstring, and the RMSNormBackward page names only what the
code has."""
import doctest
import importlib
import inspect
import pathlib
import pkgutil
import re
import subprocess
import sys

import pytest

import pylucid

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _sphinx(builder, tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("furo")
    out = tmp_path / builder
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder,
                        str(DOCS), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_docs_build_without_warnings(tmp_path):
    _sphinx("html", tmp_path)


def test_docs_pages_doctests(tmp_path):
    _sphinx("doctest", tmp_path)


def _modules():
    for info in pkgutil.walk_packages(pylucid.__path__, "pylucid."):
        if ".examples." in info.name or info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def test_docstring_examples_run():
    """Guards against docstring examples drifting from the code they document."""
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    n = 0
    for mod in [pylucid, *_modules()]:
        for test in finder.find(mod, mod.__name__, extraglobs={"pylucid": pylucid, "pl": pylucid}):
            if test.examples:
                pylucid.manual_seed(0)
                runner.run(test)
                n += len(test.examples)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed"
    assert n > 20


PUBLIC_MODULES = ["pylucid", "pylucid.nn", "pylucid.nn.functional", "pylucid.autograd",
                  "pylucid.optim", "pylucid.ops", "pylucid.nn.init"]


def test_every_public_name_has_a_docstring():
    missing = []
    for name in PUBLIC_MODULES:
        mod = importlib.import_module(name)
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n)
            if isinstance(obj, (pylucid.dtype, int, float, str, tuple)) or inspect.ismodule(obj):
                continue
            if not (getattr(obj, "__doc__", None) or "").strip():
                missing.append(f"{name}.{n}")
    assert not missing, "public names without a docstring: " + ", ".join(missing)


def test_rms_norm_backward_page_matches_code():
    """Guards against the C++ node's page naming members that do not exist."""
    page = (DOCS / "rms_norm_backward.rst").read_text()
    header = (ROOT / "cpp" / "ops" / "rms_norm.h").read_text()
    cpp_members = re.findall(r"^``(\w+)[`(]", page, flags=re.M)
    assert {"schema_v1", "saved_rstd_", "outer_", "N_", "forward", "apply"} <= set(cpp_members)
    for m in cpp_members:
        assert re.search(rf"\b{m}\b", header), f"rms_norm.h has no member {m}"
    assert "FuncOp<RMSNormBackward, 2>" in header
    cls = pylucid.autograd.RMSNormBackward
    x = pylucid.randn(2, 3, requires_grad=True)
    node = pylucid.nn.functional.rms_norm(x, (3,)).grad_fn
    assert isinstance(node, cls)
    py_members = re.findall(r"py:(?:attribute|method|staticmethod):: (\w+)", page)
    assert len(py_members) >= 8
    for m in py_members:
        assert hasattr(node, m), f"RMSNormBackward has no Python attribute {m}"
