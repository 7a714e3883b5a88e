"""``pylucid.multiprocessing``: Python's ``multiprocessing`` under PyTorch's module name, with
PyTorch's sharing-strategy switches and :func:`spawn`.

NOTE: PyTorch moves tensors between processes through shared memory; pylucid pickles them, so a
process receives a copy, and in-place updates (``model.share_memory()`` "Hogwild" training) are
not seen by the other processes. Under ``python -m pylucid.as_torch``, child processes started
with the ``spawn`` or ``forkserver`` method import pylucid as ``torch`` too.
"""
import multiprocessing
import multiprocessing.connection
import sys
import traceback
from multiprocessing import *  # noqa: F403

__all__ = ["ProcessContext", "ProcessExitedException", "ProcessRaisedException", "get_all_sharing_strategies",
           "get_sharing_strategy", "set_sharing_strategy", "spawn", "start_processes"] + list(multiprocessing.__all__)

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    """The strategies PyTorch offers on Linux for sharing tensors between processes (recorded only:
    pylucid pickles tensors)."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """The current sharing strategy ('file_descriptor' until set)."""
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    """Records ``new_strategy``, one of :func:`get_all_sharing_strategies` (AssertionError otherwise, as PyTorch)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_STRATEGIES}")
    _strategy[0] = new_strategy


class ProcessException(Exception):
    """A process started by :func:`spawn` failed: ``error_index`` is its rank, ``pid`` its id."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a nonzero code (or was killed by a signal)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _run(fn, i, args, error_queue):
    """A spawned process's body: ``fn(i, *args)``; a raised exception's traceback goes to the parent."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes :func:`spawn` started (``join=False``): ``join()`` waits, raising if one failed."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Waits up to ``timeout`` seconds (None: until one exits); True once every process has
        exited cleanly. When one failed, the others are terminated and its error is raised."""
        alive = [p for p in self.processes if p.exitcode is None]
        if alive:
            multiprocessing.connection.wait([p.sentinel for p in alive], timeout=timeout)
        failed = next((i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)), None)
        if failed is None:
            if any(p.exitcode is None for p in self.processes):
                return False
            for p in self.processes:
                p.join()
            return True
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(grace_period)
        proc, queue = self.processes[failed], self.error_queues[failed]
        if queue.empty():
            code = proc.exitcode
            if code < 0:
                import signal

                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, proc.pid,
                                             code, name)
            raise ProcessExitedException(f"process {failed} terminated with exit code {code}", failed, proc.pid, code)
        msg = f"\n\n-- Process {failed} terminated with the following error:\n" + queue.get()
        raise ProcessRaisedException(msg, failed, proc.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs ``fn(i, *args)`` in ``nprocs`` new processes (``i`` = 0 .. nprocs-1) with the given start
    method. With ``join`` it waits for all and returns None, raising ProcessRaisedException (the
    child's traceback in the message) or ProcessExitedException when one fails; otherwise it
    returns the ``ProcessContext``."""
    ctx = multiprocessing.get_context(start_method)
    queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_run, args=(fn, i, args, q), daemon=daemon)
        p.start()
        queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """:func:`start_processes` (PyTorch's ``torch.multiprocessing.spawn``)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
