"""Sphinx configuration for the pylucid documentation."""
import importlib
import re
from typing import ClassVar

from docutils.parsers.rst import Directive, directives

project = "pylucid"
author = "the pylucid developers"
copyright = "2026, the pylucid developers"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
html_theme = "furo"
html_title = "pylucid"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# Every cross-reference must resolve (a renamed function breaks the build), except the bases
# that inheritance lists name but that are not public.
nitpicky = True
nitpick_ignore = [
    ("py:class", "pybind11_builtins.pybind11_object"),
    ("py:class", "enum.Enum"),
]
nitpick_ignore_regex = [
    ("py:class", r"pylucid(\.\w+)*\._\w+"),  # private bases (_Loss, _GradModeContext, ...)
]
exclude_patterns = ["_build"]
# Only the explicit ``.. doctest::`` blocks of the pages run here; docstring examples run in
# tests/test_docs.py with each module's own globals.
doctest_test_doctest_blocks = ""
doctest_global_setup = """
import numpy as np
import pylucid
import pylucid as pl
import pylucid.nn as nn
import pylucid.nn.functional as F
pylucid.manual_seed(0)
"""


def _escape_cpp_docstrings(app, what, name, obj, options, lines):
    """Docstrings written in C++ bindings are plain text: a ``|x|`` there means an absolute value,
    not an RST substitution, so bars are escaped for them only."""
    obj = getattr(obj, "__wrapped__", obj)  # pylucid's out= wrappers of C++ functions
    if type(obj).__name__ in ("builtin_function_or_method", "instancemethod"):
        lines[:] = [re.sub(r"(?<!\\)\|", r"\\|", line) for line in lines]


class PublicAutodoc(Directive):
    """``.. public-autodoc:: pylucid._math`` with ``:as: pylucid``: documents every name of the
    module's ``__all__`` under the public module that re-exports it (``pylucid.exp``, not
    ``pylucid._math.exp``), so cross-references by public name resolve and a name added to
    ``__all__`` appears here without editing the page. A name the public module does not export
    is an error."""

    required_arguments = 1
    option_spec: ClassVar[dict] = {"as": directives.unchanged_required}

    def run(self):
        source = importlib.import_module(self.arguments[0])
        public_name = self.options.get("as", self.arguments[0])
        public = importlib.import_module(public_name)
        lines = []
        for name in source.__all__:
            obj = getattr(source, name)
            if not callable(obj):  # the dtype constants of pylucid._tensor
                continue
            if getattr(public, name, None) is not obj:
                raise self.error(f"{public_name} does not re-export {self.arguments[0]}.{name}")
            if isinstance(obj, type):
                lines += [f".. autoclass:: {public_name}.{name}", "   :members:", ""]
            else:
                lines += [f".. autofunction:: {public_name}.{name}", ""]
        self.state_machine.insert_input(lines, self.state_machine.input_lines.source(0))
        return []


def _public_class_alias(app, env, node, contnode):
    """pybind11 signatures name ``pylucid._C.Tensor``/``pylucid._C.dtype``, the classes' home when
    the extension was built; they are documented under their public names (``pylucid.Tensor``)."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith("pylucid._C."):
        return None
    public = "pylucid." + target[len("pylucid._C."):]
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], public, node,
                                             contnode)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_cpp_docstrings)
    app.connect("missing-reference", _public_class_alias)
    app.add_directive("public-autodoc", PublicAutodoc)
