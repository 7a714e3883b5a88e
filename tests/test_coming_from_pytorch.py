"""The "Coming from PyTorch" page (docs/coming_from_pytorch.rst) against the package: every name
its Supported and Differs tables list exists, and every name its Unsupported table lists does
not, so the page cannot go stale. When a listed-unsupported name is implemented, this test fails
until the name moves to a Supported table."""
import pathlib
import re

import pylucid
import pytest

PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "coming_from_pytorch.rst"
IDENT = re.compile(r"``([A-Za-z_][A-Za-z0-9_]*)``")


def parse_tables(text):
    """{table title: [(name, notes), ...]} for every ``.. list-table::`` on the page, the header
    row left out; ``name`` is the first cell's ``literal``."""
    tables, title, rows = {}, None, None
    for line in text.splitlines():
        m = re.match(r"\.\. list-table:: (.+)", line)
        if m:
            title, rows = m.group(1).strip(), []
            tables[title] = rows
            continue
        if rows is None:
            continue
        m = re.match(r"   \* - (.*)", line)
        if m:
            rows.append([m.group(1).strip(), ""])
        elif re.match(r"     - ?(.*)", line) and rows:
            rows[-1][1] = line.strip()[1:].strip()
        elif line.startswith("       ") and rows:
            rows[-1][1] += " " + line.strip()
        elif line and not line.startswith(" "):
            rows = None
    out = {}
    for t, rs in tables.items():
        body = [r for r in rs if r[0] != "PyTorch name"]
        names = []
        for cell, notes in body:
            m = re.fullmatch(r"``([\w.]+)``", cell)
            assert m, f"table {t!r}: first cell {cell!r} is not a single ``name``"
            names.append((m.group(1), notes))
        out[t] = names
    return out


def resolve(name):
    """The pylucid object for a PyTorch name (``torch.a.b`` -> ``pylucid.a.b``, ``Tensor.m``
    -> ``pylucid.Tensor.m``), or None when it does not exist."""
    parts = name.split(".")
    obj = pylucid
    if parts[0] == "torch":
        parts = parts[1:]
    elif parts[0] != "Tensor":
        raise AssertionError(f"{name}: names start with 'torch.' or 'Tensor.'")
    for p in parts:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj


TABLES = parse_tables(PAGE.read_text())


def _rows(prefix):
    return [(t, n, notes) for t, rows in TABLES.items() if t.startswith(prefix) for n, notes in rows]


def test_page_has_the_three_kinds_of_table():
    """Guards against a renamed table silently dropping out of the checks below."""
    assert len(_rows("Supported")) > 50
    assert len(_rows("Differs")) >= 5
    assert len(_rows("Unsupported")) >= 20


def test_supported_and_differing_names_exist():
    """Guards against the page promising a name the package does not have."""
    missing = [n for _, n, _ in _rows("Supported") + _rows("Differs") if resolve(n) is None]
    assert not missing, "listed as supported but missing from pylucid: " + ", ".join(missing)


def test_names_in_supported_notes_exist():
    """Guards against the "and ..." lists in the notes naming something that is not there:
    ``torch.nn.ReLU`` with "and ``GELU``" means ``torch.nn.GELU`` must exist."""
    missing = []
    for _, name, notes in _rows("Supported"):
        if not (notes.startswith("and ") or notes.startswith("also ")):
            continue
        parent = name.rsplit(".", 1)[0]
        for ident in IDENT.findall(notes):
            if resolve(f"{parent}.{ident}") is None:
                missing.append(f"{parent}.{ident} (notes of {name})")
    assert not missing, "named in Supported notes but missing: " + ", ".join(missing)


def test_unsupported_names_are_missing():
    """Guards against the page calling a name unsupported after it was implemented: move it to
    a Supported table."""
    present = [n for _, n, _ in _rows("Unsupported") if resolve(n) is not None]
    assert not present, ("listed as unsupported but pylucid has them now (move them to a Supported table "
                         "in docs/coming_from_pytorch.rst): " + ", ".join(present))


def test_no_name_is_listed_twice():
    """Guards against a name being both supported and unsupported."""
    seen = {}
    for t, rows in TABLES.items():
        for n, _ in rows:
            kind = t.split(":")[0]
            assert seen.setdefault(n, kind) == kind or kind == "Differs" or seen[n] == "Differs", n


@pytest.mark.parametrize("name,expected", [("torch.nn.Linear", pylucid.nn.Linear), ("Tensor.item", pylucid.Tensor.item),
                                           ("torch.nn.NoSuchLayer", None)])
def test_resolve(name, expected):
    """Guards against the name resolver accepting everything (or nothing)."""
    assert resolve(name) is expected
