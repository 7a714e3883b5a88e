"""The design page's "adding an op" recipe, applied for real.

The code blocks of docs/design.rst's "Adding an op" section each name the file they go into;
this test copies the source tree to a temporary directory, puts every block into its file (and
nowhere else), checks that the recipe hand-edits at most three files per op, recompiles only the
two op files against an existing build tree (the one the imported extension came from, or the
``pip install .`` tree under build/) and links a new extension from them. A fresh interpreter then
imports the copy and checks the new unary and binary ops' values against numpy, their gradients
(gradcheck) and second derivatives (gradgradcheck), their Tensor methods and their schemas.

Skipped, with the reason, when there is no compiler toolchain or no up-to-date build tree to
compile against, or when PYLUCID_SKIP_RECIPE_BUILD is set.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pylucid

ROOT = Path(__file__).resolve().parent.parent
OP_FILES = ("cpp/ops/unary.cpp", "cpp/ops/binary.cpp")


def recipe_blocks():
    """(file, code) for each code block of the design page's "Adding an op" section."""
    page = (ROOT / "docs" / "design.rst").read_text()
    section = page.split("\nAdding an op\n", 1)[1].split("\n-----", 1)[0]
    section = section.rsplit("\n", 2)[0]  # the next section's title line
    blocks = []
    for m in re.finditer(r"\.\. code-block:: \w+\n\n((?:(?:[ ]{6}.*)?\n)+)", section):
        code = textwrap.dedent(m.group(1)).strip("\n")
        first, _, body = code.partition("\n")
        blocks.append((re.sub(r"^(//|#)\s*", "", first), body + "\n"))
    return blocks


def test_recipe_names_at_most_three_files_per_op():
    files = [f for f, _ in recipe_blocks()]
    assert files == ["cpp/ops/unary.cpp", "cpp/ops/binary.cpp", "python/pylucid/_math.py"]
    page = (ROOT / "docs" / "design.rst").read_text()
    # op file + Python name + test, for each kind of op
    assert "three hand-edited files" in page and "tests/test_unary.py" in page


def find_build_tree():
    """A build tree of this source tree whose extension is newer than every C++ source."""
    candidates = [Path(os.environ["PYLUCID_EXT_DIR"])] if os.environ.get("PYLUCID_EXT_DIR") else []
    candidates += [Path(pylucid._C.__file__).parent] + sorted((ROOT / "build").glob("*"))
    for d in candidates:
        d = d.resolve()
        cache, ext = d / "CMakeCache.txt", sorted(d.glob("_C.*.so"))
        if not (d / "build.ninja").exists() or not cache.exists() or not ext:
            continue
        home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M)
        if not home or Path(home.group(1)).resolve() != ROOT:
            continue
        newest = max(p.stat().st_mtime for p in (ROOT / "cpp").rglob("*") if p.suffix in (".h", ".cpp"))
        if ext[0].stat().st_mtime >= newest:  # linked after the last change to any C++ source
            return d
    return None


def apply_recipe(tree):
    for rel, code in recipe_blocks():
        path = tree / rel
        text = path.read_text()
        if rel.endswith(".cpp"):  # inside namespace lucid, after everything else
            head, sep, tail = text.rpartition("}  // namespace lucid")
            text = head + code + "\n" + sep + tail
        else:
            text += "\n" + code
        path.write_text(text)


def edited(cmd, edit):
    """`cmd` (a ninja command, possibly `: && ... && :`) with edit(args) applied to its parts."""
    parts = [p if p.strip() == ":" else shlex.join(edit(shlex.split(p))) for p in cmd.split(" && ")]
    return " && ".join(parts)


def run(cmd, cwd):
    r = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, cmd + "\n" + r.stderr[-4000:]


def compile_command(cmd, build, tree, obj):
    """The build tree's command for one op file, reading sources and headers from `tree`."""
    def edit(args):
        if shutil.which(args[0]) is None and "ccache" in map(os.path.basename, args):
            # a compiler launcher whose program is gone (an older tree's `cmake -E env ... ccache`
            # from pip's deleted build environment): compile without it
            args = args[[os.path.basename(a) for a in args].index("ccache") + 1:]
        out, skip = [], False
        for i, a in enumerate(args):
            if skip:
                skip = False
                continue
            if a in ("-MT", "-MF"):  # no dependency file
                skip = True
                continue
            if a == "-MD":
                continue
            prev = args[i - 1] if i else ""
            if prev == "-o":
                a = str(obj)
            elif prev == "-c":
                a = str(tree / next(f for f in OP_FILES if a.endswith(f)))
            elif a.startswith("-I") and len(a) > 2 and (build / a[2:]).resolve() == ROOT / "cpp":
                a = "-I" + str(tree / "cpp")
            elif prev == "-I" and (build / a).resolve() == ROOT / "cpp":
                a = str(tree / "cpp")
            out.append(a)
        return out
    return edited(cmd, edit)


def link_command(cmd, objects, so):
    """The extension's link command, writing `so`, with `objects` ahead of the core library (whose
    old op objects are then never pulled in)."""
    def edit(args):
        if "-o" not in args:
            return args
        args[args.index("-o") + 1] = str(so)
        k = next(k for k, a in enumerate(args) if a.endswith("liblucid_core.a"))
        return args[:k] + [str(o) for o in objects] + args[k:]
    return edited(cmd, edit)


@pytest.mark.skipif(bool(os.environ.get("PYLUCID_SKIP_RECIPE_BUILD")), reason="PYLUCID_SKIP_RECIPE_BUILD is set")
def test_recipe_builds_and_the_new_ops_work(tmp_path):
    ninja = shutil.which("ninja")
    if ninja is None:
        pytest.skip("ninja is not installed (needed to read the build tree's commands)")
    build = find_build_tree()
    if build is None:
        pytest.skip("no up-to-date build tree of this checkout (run tools/dev-build.sh or pip install . first)")
    tree = tmp_path / "src"
    shutil.copytree(ROOT / "cpp", tree / "cpp")
    shutil.copytree(ROOT / "python", tree / "python", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    apply_recipe(tree)
    changed = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()
                     and p.read_bytes() != (ROOT / p.relative_to(tree)).read_bytes())
    assert changed == ["cpp/ops/binary.cpp", "cpp/ops/unary.cpp", "python/pylucid/_math.py"]

    commands = subprocess.run([ninja, "-C", str(build), "-t", "commands", "_C"], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    objects, jobs = [], []
    for f in OP_FILES:  # only the two op files are compiled (side by side); the bindings read the op table
        cmd = next(c for c in commands if " -c " in c and c.split(" -c ")[-1].split()[0].endswith(f))
        objects.append(tmp_path / (Path(f).name + ".o"))
        cmd = compile_command(cmd, build, tree, objects[-1])
        jobs.append((cmd, subprocess.Popen(cmd, shell=True, cwd=build, stderr=subprocess.PIPE, text=True)))
    for cmd, job in jobs:
        _, err = job.communicate()
        assert job.returncode == 0, cmd + "\n" + err[-4000:]
    ext = tmp_path / "ext"
    ext.mkdir()
    link = next(c for c in commands if "liblucid_core.a" in c and " -o " in c and "_C." in c)
    so_name = re.search(r"-o (\S*_C\.\S+)", link).group(1)
    run(link_command(link, objects, ext / Path(so_name).name), build)

    check = textwrap.dedent("""
        import numpy as np
        import pylucid
        from pylucid.autograd import gradcheck, gradgradcheck

        x = pylucid.randn(3, 4, dtype=pylucid.float64, requires_grad=True)
        y = pylucid.randn(4, dtype=pylucid.float64, requires_grad=True)
        np.testing.assert_allclose(pylucid.cube(x).detach().numpy(), x.detach().numpy() ** 3)
        assert x.cube().grad_fn.name() == "CubeBackward"
        assert pylucid.cube(pylucid.tensor([2, -3])).tolist() == [8, -27]  # integers stay integers
        assert gradcheck(pylucid.cube, (x,)) and gradgradcheck(pylucid.cube, (x,))
        d = (x.detach().numpy() - y.detach().numpy()) ** 2
        np.testing.assert_allclose(pylucid.squared_difference(x, y).detach().numpy(), d)
        np.testing.assert_allclose(x.squared_difference(2.0).detach().numpy(), (x.detach().numpy() - 2) ** 2)
        assert pylucid.squared_difference(x, y).grad_fn.name() == "SquaredDifferenceBackward"
        assert gradcheck(pylucid.squared_difference, (x, y))
        assert gradgradcheck(pylucid.squared_difference, (x, y))
        assert pylucid.ops.schema("cube").amp_policy == pylucid.ops.schema("squared_difference").amp_policy
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=str(tree / "python"), PYLUCID_EXT_DIR=str(ext))
    r = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
