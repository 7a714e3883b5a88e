"""The examples run end to end with small --steps (in process, to keep this file fast), print
their metric lines, write plots when matplotlib is there and say so when it is not."""
import builtins
import os
import re
import subprocess
import sys

import pytest
from pylucid.examples import (_common, char_lm, char_rnn, digits_cnn, group_rms, make_corpus, norms,
                              spirals)


def run(module, argv, capsys):
    result = module.main(argv + ["--no-progress"])
    return result, capsys.readouterr().out


def test_spirals(capsys):
    """Guards against the spirals example not learning or losing its metric line."""
    result, out = run(spirals, ["--steps", "150"], capsys)
    m = re.search(r"^accuracy: (\d+\.\d)%", out, re.MULTILINE)
    assert m and float(m.group(1)) == pytest.approx(100 * result["accuracy"], abs=0.05)
    assert result["accuracy"] > 0.8 and result["loss_is_finite"]


def test_char_lm(capsys):
    """Guards against the language model not beating the unigram baseline, or missing output."""
    result, out = run(char_lm, ["--steps", "60"], capsys)
    assert "unigram entropy baseline:" in out and "validation loss:" in out and "sample: at dawn, " in out
    assert result["val_loss"] < result["unigram"] - 0.3
    assert len(result["sample"]) == len("at dawn, ") + 200


def test_char_rnn(capsys):
    """Guards against the LSTM language model not beating the unigram baseline, or missing output."""
    result, out = run(char_rnn, ["--steps", "60"], capsys)
    assert "unigram entropy baseline:" in out and "validation loss:" in out and "sample: at dawn, " in out
    assert result["val_loss"] < result["unigram"] - 0.3
    assert len(result["sample"]) == len("at dawn, ") + 200


def test_norms(capsys):
    """Guards against the comparison table missing a variant or the variants not training."""
    result, out = run(norms, ["--steps", "12", "--width", "64", "--depth", "2", "--batch", "64"], capsys)
    assert set(result) == {"RMSNorm", "pRMSNorm (6.25%)", "LayerNorm"}
    for name in result:
        assert re.search(rf"^{re.escape(name)}\s+\d+\.\d+\s+\d+\.\d+x\s+\d+\.\d\s+\d+\.\d+x\s+\d+\.\d+\s+\d+\.\d%$", out, re.MULTILINE), name
        assert result[name]["final_loss"] < 2.3  # below chance level, log(10)


def test_group_rms(capsys):
    """Guards against the GroupRMSNorm example not reaching a useful accuracy."""
    result, out = run(group_rms, ["--steps", "120"], capsys)
    assert re.search(r"^accuracy: \d+\.\d%", out, re.MULTILINE) and "GroupRMSNorm(channels=24, groups=3" in out
    assert result["accuracy"] > 0.7


def test_digits_cnn(capsys):
    """Guards against the CNN example (conv, norms on feature maps, pooling) not learning the
    procedurally drawn digits, or losing its metric line."""
    result, out = run(digits_cnn, ["--steps", "80"], capsys)
    m = re.search(r"^accuracy: (\d+\.\d)%", out, re.MULTILINE)
    assert m and float(m.group(1)) == pytest.approx(100 * result["accuracy"], abs=0.05)
    assert result["accuracy"] > 0.85 and result["loss_is_finite"]


def test_digits_are_drawn_per_class():
    """Guards against a broken renderer: images in [0, 1] before normalisation, every class
    present, and two draws of one class differing (the jitter is applied)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = digits_cnn.render(3, rng), digits_cnn.render(3, rng)
    assert a.shape == (28, 28) and 0.0 <= a.min() and a.max() <= 1.0 and not np.allclose(a, b)
    x, y = digits_cnn.make_digits(50, seed=1)
    assert x.shape == (50, 1, 28, 28) and sorted(set(y.tolist())) == list(range(10))


def test_plot_written_when_matplotlib_installed(tmp_path, capsys):
    """Guards against --plot writing a broken file."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "loss.png"
    run(spirals, ["--steps", "5", "--plot", str(path)], capsys)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_so(tmp_path, capsys, monkeypatch):
    """Guards against --plot crashing (or silently doing nothing) without matplotlib."""
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    _, out = run(spirals, ["--steps", "3", "--plot", str(tmp_path / "x.png")], capsys)
    assert "matplotlib is not installed" in out and not (tmp_path / "x.png").exists()


def test_plain_progress_bar(capsys, monkeypatch):
    """Guards against the fallback progress bar (no tqdm) crashing or not finishing its line."""
    bar = _common._PlainBar(5, "demo")
    for _ in range(5):
        bar.set_postfix_str("loss=1.0")
        bar.update()
    bar.close()
    err = capsys.readouterr().err
    assert "demo [" in err and "5/5" in err and err.endswith("\n")


def test_bad_steps_argument():
    """Guards against --steps 0 running an empty loop and dividing by zero."""
    with pytest.raises(SystemExit, match="--steps"):
        spirals.main(["--steps", "0"])


def test_shipped_corpus_is_generated_by_the_grammar():
    """Guards against the shipped corpus drifting from (or not coming from) its generator."""
    with open(make_corpus.DEFAULT_PATH, encoding="utf-8") as f:
        assert f.read() == make_corpus.generate()


def test_module_entry_point():
    """Guards against `python -m pylucid.examples.<name>` not running (package layout)."""
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "pylucid.examples.spirals", "--steps", "2", "--no-progress"], check=False,
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^accuracy: \d+\.\d%", out.stdout, re.MULTILINE)
