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

import numpy as np
import pylucid
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _sphinx(builder, tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("furo")
    out = tmp_path / builder
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder,
                        str(DOCS), str(out)], capture_output=True, text=True, check=False)
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
                  "pylucid.optim", "pylucid.optim.lr_scheduler", "pylucid.ops", "pylucid.nn.init",
                  "pylucid.nn.utils", "pylucid.amp", "pylucid.serialization"]


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


def _struct_members(header, struct):
    """Names of the data members and member functions declared in ``struct`` (inline function
    bodies and comments stripped)."""
    body = re.search(rf"struct {struct}\b[^{{]*{{(.*?)\n}};", header, flags=re.DOTALL).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    while re.search(r"{[^{}]*}", body):
        body = re.sub(r"{[^{}]*}", ";", body)
    fields = set(re.findall(r"(\w+)\s*(?:=[^;(]*)?;", body)) - {"const", "override", "final", "noexcept"}
    functions = set(re.findall(r"(\w+)\s*\(", body))
    statics = set(re.findall(r"\bstatic\b[^;(]*?(\w+)\s*[;(]", body))
    return fields | functions, statics


def test_rms_norm_backward_page_matches_code():
    """Guards against the C++ node's page naming members that do not exist, missing members the
    header declares, or calling a member static that is not (in C++ or in Python)."""
    page = (DOCS / "rms_norm_backward.rst").read_text()
    header = (ROOT / "cpp" / "ops" / "rms_norm.h").read_text()
    assert "struct RMSNormBackward : FuncOp<RMSNormBackward, 2>" in header
    declared, declared_static = _struct_members(header, "RMSNormBackward")
    assert {"schema_v1", "saved_rstd_", "outer_", "N_", "forward", "apply"} <= declared
    # The C++ members section: one definition-list term per member, "``name``" or "``name(...)``".
    section = page.split("C++ members", 1)[1].split("From Python", 1)[0]
    terms = re.findall(r"^``(\w+)(\(|``)[^\n]*$", section, flags=re.MULTILINE)
    cpp_members = {m for m, _ in terms}
    assert cpp_members == declared, (f"page lists {sorted(cpp_members - declared)} that rms_norm.h does "
                                     f"not declare, misses {sorted(declared - cpp_members)}")
    for line in re.findall(r"^``\w+[^\n]*$", section, flags=re.MULTILINE):
        name = re.match(r"``(\w+)", line).group(1)
        assert ("static" in line) == (name in declared_static), f"static-ness of {name} on the page"

    # The Python class: every attribute, method and static method the page names exists with
    # that kind, on the class itself and on a node recorded by rms_norm.
    cls = pylucid._C.RMSNormBackward
    assert pylucid.autograd.RMSNormBackward is cls
    x = pylucid.randn(2, 3, requires_grad=True)
    node = pylucid.nn.functional.rms_norm(x, (3,)).grad_fn
    assert isinstance(node, cls)
    py = re.findall(r"py:(attribute|method|staticmethod):: (\w+)", page)
    assert {n for _, n in py} >= {"schema_v1", "saved_rstd", "outer", "N", "k", "eps", "forward", "apply",
                                  "name"}
    for kind, m in py:
        assert hasattr(cls, m) and hasattr(node, m), f"RMSNormBackward has no Python attribute {m}"
        raw = inspect.getattr_static(cls, m)
        if kind == "attribute":
            assert isinstance(raw, property), f"{m} is documented as an attribute"
        elif kind == "staticmethod":
            assert isinstance(raw, staticmethod), f"{m} is documented as a static method"
        else:
            assert callable(raw) and not isinstance(raw, (staticmethod, property)), f"{m} is not a method"
    # Each Python attribute mirrors the C++ member of the same name plus "_" (or comes from Node).
    for kind, m in py:
        if kind == "attribute" and m not in ("schema", "next_functions"):
            assert m in declared or m + "_" in declared, f"{m} mirrors no member of rms_norm.h"

    # The static forward and apply do what the page says.
    g = pylucid.ones(3, requires_grad=True)
    out = cls.forward(x, g, 1e-6)
    assert isinstance(out.grad_fn, cls) and out.shape == x.shape
    assert (out.grad_fn.outer, out.grad_fn.N, out.grad_fn.k) == (2, 3, 3)
    assert out.grad_fn.saved_rstd.shape == (2,)
    go = pylucid.randn(2, 3)
    dx, dg = out.grad_fn.apply(go)
    ex, eg = pylucid.autograd.grad(out, (x, g), go)
    np.testing.assert_allclose(np.asarray(dx), np.asarray(ex), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(dg), np.asarray(eg), rtol=1e-6, atol=1e-6)
    assert cls.schema_v1 == pylucid.ops.schema("rms_norm") == node.schema


def test_design_page_names_real_files_and_helpers():
    """Guards against the design page's architecture walk-through and "adding an op" recipe
    naming files, helpers or bench scripts that were renamed or removed."""
    page = (DOCS / "design.rst").read_text()
    paths = set(re.findall(r"((?:cpp|python|tests|tools|bench)/[\w/.\-]*\w)", page))
    assert {"cpp/ops/unary.cpp", "cpp/ops/unary.h", "cpp/bindings/ops_math.cpp", "python/pylucid/_math.py",
            "python/pylucid/_C.pyi", "tools/gen_stubs.py", "tests/test_unary.py", "bench/bench_ops.py",
            "bench/bench_rms_norm.py", "bench/bench_train_step.py"} <= paths
    for p in paths:
        assert (ROOT / p).exists(), f"design.rst names {p}, which does not exist"
    # Each helper the page names, paired with the declaration that must still be in its file.
    defined_in = {
        "cpp/ops/op_utils.h": [("unary_apply", "TensorImplPtr unary_apply("),
                               ("binary_apply", "TensorImplPtr binary_apply("),
                               ("ternary_apply", "TensorImplPtr ternary_apply("),
                               ("grad_for", "TensorImplPtr grad_for(")],
        "cpp/bindings/common.h": [("LUCID_BINDING", "#define LUCID_BINDING("), ("def_method", "void def_method("),
                                  ("maybe_nogil", "auto maybe_nogil("), ("OptTensor", "using OptTensor")],
        "cpp/core/op_schema.h": [("register_schema", "register_schema(")],
        "cpp/core/autocast.h": [("compute_dtype", "compute_dtype(")],
        "cpp/autograd/func_op.h": [("set_inputs", "void set_inputs("), ("attach_node", "void attach_node("),
                                   ("FuncOp", "using FuncOp =")],
        "cpp/ops/unary.cpp": [("LUCID_UNARY_SCHEMA", "#define LUCID_UNARY_SCHEMA(Op, op_name, policy)"),
                              ("unary_op", "TensorImplPtr unary_op("), ("Domain::FloatPromote", "FloatPromote"),
                              ("Saves::Input", "enum class Saves { Nothing, Input, Output }"),
                              ("stable_sigmoid", "A stable_sigmoid("), ("SiluOp", "struct SiluOp {"),
                              ("UnaryBackward", "struct UnaryBackward : FuncOp<UnaryBackward<Op>, 1>")],
        "cpp/bindings/ops_math.cpp": [("unary[]", "const Unary unary[] = {"),
                                      ("LUCID_BINDING(ops_math, 10)", "LUCID_BINDING(ops_math, 10)"),
                                      ("def_method", "def_method(u.name")],
        "cpp/kernels/cpu/norm.h": [("rms_norm_forward", "void rms_norm_forward(")],
        "cpp/bindings/nn_norm.cpp": [("_C._rms_norm", '"_rms_norm"')],
        "tests/helpers.py": [("check_op", "def check_op(")],
        "tests/test_unary.py": [("OPS", "OPS = [")],
    }
    for path, pairs in defined_in.items():
        text = (ROOT / path).read_text()
        for on_page, in_file in pairs:
            assert on_page in page, f"design.rst no longer mentions {on_page}; update this test"
            assert in_file in text, f"{path} no longer has {in_file!r}, which design.rst relies on"


def test_rmsnorm_pages_cover_every_documented_field():
    """Guards against the RMSNorm family pages dropping a parameter, attribute, return, raise or
    reference that the layers' reference documentation carries."""
    rms = (DOCS / "rmsnorm.rst").read_text()
    node = (DOCS / "rms_norm_backward.rst").read_text()
    sections = {
        "RMSNorm": ["``dim``", "``eps``", "``partial_ratio``", "``weight``", "``k``", "``normalized_shape``",
                    "**Returns**", "**Raises**", "max(1, ceil(dim * partial_ratio))"],
        "Partial RMSNorm (pRMSNorm)": ["Section 5", "6.25", "``partial_ratio``", "``k``"],
        "GroupRMSNorm": ["``channel_groups``", "``eps``", "``affine``", "``n_channels``", "``gamma``",
                         "(B, C, 1)", "**Returns**", "**Raises**"],
    }
    for title, needles in sections.items():
        body = rms.split(f"\n{title}\n", 1)[1].split("\n---", 1)[0]
        for n in needles:
            assert n in body, f"rmsnorm.rst, section {title}: {n} is missing"
    for page in (rms, node):
        assert "arXiv:1910.07467" in page and "Zhang" in page and "Sennrich" in page
    for n in ["*Parameters*", "*Returns*", "*Raises*", "ShapeMismatch", "Thread safety", "``grad_out``",
              "outer_ * N_", "FuncOp<RMSNormBackward, 2>"]:
        assert n in node, f"rms_norm_backward.rst: {n} is missing"
    # The layer attributes the page names exist on the layers.
    layer, group = pylucid.nn.RMSNorm(8, partial_ratio=0.25), pylucid.nn.GroupRMSNorm([0, 1, 1])
    for a in ["weight", "eps", "partial_ratio", "k", "normalized_shape"]:
        assert hasattr(layer, a), a
    for a in ["channel_groups", "n_channels", "gamma", "eps"]:
        assert hasattr(group, a), a
