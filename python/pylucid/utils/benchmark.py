"""PyTorch's ``torch.utils.benchmark``: :class:`Timer` runs a statement many times and returns a
:class:`Measurement` (per-run times, their median and interquartile range), printed as PyTorch
prints one.

>>> from pylucid.utils.benchmark import Timer
>>> import pylucid
>>> m = Timer("x.sum()", globals={"x": pylucid.ones(100)}, label="sum").timeit(50)
>>> m.number_per_run, len(m.times), m.median > 0
(50, 1, True)
"""
import timeit as _timeit

import numpy as np

__all__ = ["Measurement", "TaskSpec", "Timer"]


class TaskSpec:
    """What a measurement timed: the statement, its setup, the labels and the thread count."""

    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None, description=None, env=None,
                 num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description, self.env = label, sub_label, description, env
        self.num_threads = num_threads

    @property
    def title(self):
        """The label (else the statement), followed by ``: sub_label`` when there is one."""
        head = self.label if self.label is not None else self.stmt
        return f"{head}: {self.sub_label}" if self.sub_label else head


def _unit(seconds):
    """The unit PyTorch prints ``seconds`` in, and its size in seconds."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if seconds < scale * 1000:
            return unit, scale
    return "s", 1.0


class Measurement:
    """The result of a Timer run: ``raw_times`` are the times of whole blocks of
    ``number_per_run`` runs, ``times`` the per-run times; ``mean``, ``median`` and ``iqr``
    (interquartile range, linear quantiles) are over ``times``."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = int(number_per_run)
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):  # stmt, label, sub_label, description, env, num_threads, title
        if name in ("stmt", "setup", "label", "sub_label", "description", "env", "num_threads", "title"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self):
        return float(np.mean(self.times))

    @property
    def median(self):
        return float(np.median(self.times))

    @property
    def iqr(self):
        p25, p75 = np.percentile(self.times, [25, 75])
        return float(p75 - p25)

    def meets_confidence(self, threshold=0.1):
        """Whether the interquartile range is under ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self):
        return not self.meets_confidence()

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct task among ``measurements``, their per-run times pooled."""
        by_task: dict = {}
        for m in measurements:
            key = tuple(vars(m.task_spec).values())
            by_task.setdefault(key, []).append(m)
        return [Measurement(1, [t for m in group for t in m.times], group[0].task_spec) for group in by_task.values()]

    def __repr__(self):
        lines = [f"<{type(self).__module__}.Measurement object at {hex(id(self))}>", self.title]
        if self.description:
            lines.append(self.description)
        n, threads = len(self.raw_times), f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        unit, scale = _unit(self.median)
        if n == 1:
            lines += [f"  {self.median / scale:.2f} {unit}", f"  1 measurement, {self.number_per_run} runs , {threads}"]
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            if n >= 4:
                p25, p75 = np.percentile(self.times, [25, 75]) / scale
                lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25:.2f} to {p75:.2f})")
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, {threads}")
            if self.has_warnings:
                spread = self.iqr / self.median
                why = ("This could indicate system fluctuation." if spread <= 0.25
                       else "This suggests significant environmental influence.")
                lines += [f"  WARNING: Interquartile range is {spread * 100:.1f}% of the median measurement.",
                          f"           {why}"]
        return "\n".join(lines)

    __str__ = __repr__


class Timer:
    """Times ``stmt`` (a string of Python, run with ``globals``) after ``setup``, with pylucid's
    thread count set to ``num_threads`` while it runs (and restored after)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if str(getattr(language, "name", language)).lower() not in ("python", "py"):
            raise ValueError(f"Timer: pylucid times Python statements only, got language={language!r}")
        if not isinstance(stmt, str) or not isinstance(setup, str):
            raise ValueError("Timer: stmt and setup must be strings of Python")
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)
        g = dict(globals or {})
        if global_setup:
            exec(global_setup, g)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=g)

    def _run(self, number):
        import pylucid

        saved = pylucid.get_num_threads()
        pylucid.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            pylucid.set_num_threads(saved)

    def timeit(self, number=1000000):
        """One measurement of ``number`` runs (after a short warm-up of ``max(number // 100, 2)`` runs)."""
        self._run(max(number // 100, 2))
        return Measurement(number, [self._run(number)], self._task_spec)

    def _block_size(self, block_time):
        """The smallest power of ten of runs whose block takes at least ``block_time`` seconds."""
        number = 1
        while self._run(number) < block_time and number < 10 ** 9:
            number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs (sized to take about a tenth of ``min_run_time`` each) until
        ``min_run_time`` seconds have been spent; each block is one measurement.
        ``callback(number, time)`` is called after each block."""
        number = self._block_size(min_run_time / 10)
        raw: list = []
        total = 0.0
        while total < min_run_time or not raw:
            t = self._run(number)
            raw.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return Measurement(number, raw, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the interquartile range is under ``threshold`` times the median
        (after at least ``min_run_time`` seconds and 4 blocks) or ``max_run_time`` seconds are spent."""
        number = self._block_size(min_run_time / 10)
        raw: list = []
        total = 0.0
        while True:
            t = self._run(number)
            raw.append(t)
            total += t
            if callback is not None:
                callback(number, t)
            m = Measurement(number, raw, self._task_spec)
            if (total >= min_run_time and len(raw) >= 4 and m.meets_confidence(threshold)) or total >= max_run_time:
                return m
