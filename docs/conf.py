"""Sphinx configuration for the pylucid documentation."""
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
nitpicky = False
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
