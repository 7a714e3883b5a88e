"""Shared by the examples: the common command line (--steps, --seed, --plot), a progress bar
(tqdm when installed, a plain one otherwise) and the loss-curve plot."""
import argparse
import sys
import time

import pylucid


def parser(description, steps):
    """An ArgumentParser with the options every example takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=steps, help=f"training steps (default {steps})")
    p.add_argument("--seed", type=int, default=0, help="seed for data, init and sampling (default 0)")
    p.add_argument("--plot", metavar="PATH", default=None,
                   help="write the loss curve to this PNG (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="don't draw a progress bar")
    return p


def check_args(args):
    if args.steps < 1:
        raise SystemExit(f"error: --steps must be at least 1, got {args.steps}")


class _PlainBar:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, total, desc):
        self.total, self.desc, self.n = total, desc, 0
        self.postfix = ""
        self.start = self.last = time.perf_counter()

    def set_postfix_str(self, s, refresh=True):
        self.postfix = s

    def update(self, n=1):
        self.n += n
        now = time.perf_counter()
        if now - self.last >= 0.1 or self.n >= self.total:
            self.last = now
            self._draw(now)

    def _draw(self, now):
        width = 30
        filled = int(width * self.n / max(1, self.total))
        rate = self.n / max(now - self.start, 1e-9)
        sys.stderr.write(f"\r{self.desc} [{'#' * filled}{'.' * (width - filled)}] {self.n}/{self.total} "
                         f"{rate:.0f} it/s {self.postfix}  ")
        sys.stderr.flush()

    def close(self):
        self._draw(time.perf_counter())
        sys.stderr.write("\n")
        sys.stderr.flush()


class _NoBar:
    def __init__(self, *a, **k):
        pass

    def set_postfix_str(self, s, refresh=True):
        pass

    def update(self, n=1):
        pass

    def close(self):
        pass


def progress(total, desc, enabled=True):
    """A progress bar with ``update()``, ``set_postfix_str()`` and ``close()``."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainBar(total, desc)
    return tqdm(total=total, desc=desc, leave=True, dynamic_ncols=True)


def train_loop(args, label, opt, loss_fn, sched=None, clip=None):
    """``args.steps`` optimizer steps: ``loss_fn(step)`` builds the batch and returns the loss,
    then backward, gradient clipping to norm ``clip`` (if given), ``opt.step()`` and
    ``sched.step()``. Shows a progress bar and returns ``(losses, seconds)``: the per-step
    ``(step, loss)`` pairs and the wall time of each step."""
    params = [p for g in opt.param_groups for p in g["params"]]
    losses, seconds = [], []
    bar = progress(args.steps, label, not args.no_progress)
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(step)
        loss.backward()
        if clip is not None:
            pylucid.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        if sched is not None:
            sched.step()
        seconds.append(time.perf_counter() - t0)
        losses.append((step, loss.item()))
        bar.set_postfix_str(f"loss={losses[-1][1]:.4f}", refresh=False)
        bar.update()
    bar.close()
    return losses, seconds


def accuracy(model, x, y):
    """Fraction of rows of ``x`` whose arg-max logit is the label ``y``, in eval mode."""
    was_training = model.training
    model.eval()
    with pylucid.no_grad():
        pred = model(x).argmax(dim=1)
    model.train(was_training)
    return float((pred == y).float().mean().item())


def plot_curves(path, curves, title, ylabel="loss"):
    """Write ``curves`` (label -> list of (step, value)) as a PNG at ``path``; prints what
    happened. Returns True when the file was written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot: matplotlib is not installed, so no plot was written to {path} "
              "(pip install matplotlib)")
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    for label, pts in curves.items():
        xs, ys = zip(*pts) if pts else ((), ())
        ax.plot(xs, ys, label=label, linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if all(y > 0 for pts in curves.values() for _, y in pts):
        ax.set_yscale("log")  # losses span decades; a log axis keeps the late steps readable
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(curves) > 1:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"loss curve written to {path}")
    return True


def banner(name, args):
    print(f"pylucid {pylucid.__version__} -- {name}: steps={args.steps} seed={args.seed}")
