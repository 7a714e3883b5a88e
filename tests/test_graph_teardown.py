"""Graphs of any length: creating, running and deleting a chain of millions of nodes must not
recurse in C++ (a recursive node destructor overflowed the stack at ~300,000 nodes)."""
import subprocess
import sys
import textwrap

import pylucid

SCRIPT = textwrap.dedent("""
    import pylucid
    n = 2_000_000
    x = pylucid.ones(1, requires_grad=True)
    total = x
    for _ in range(n // 2):          # two nodes per step: AddBackward and the shared AccumulateGrad
        total = total + x
    assert pylucid._C._live_counts()[1] >= n // 2
    del total                        # deleted without backward
    assert pylucid._C._live_counts()[1] == 0, pylucid._C._live_counts()
    y = x
    neg = pylucid.Tensor.neg
    for _ in range(n):
        y = neg(y)
    y.backward()                     # run backward through 2,000,000 nodes
    assert x.grad.item() == 1.0
    del y
    assert pylucid._C._live_counts()[1] == 0
    print("ok")
""")


def test_two_million_node_chains_create_delete_and_backward():
    """Guards against recursive teardown: the subprocess must exit cleanly, not segfault."""
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok"


def test_leaf_shares_one_accumulator():
    """Guards against one AccumulateGrad per use of a leaf: hooks and node counts depend on it."""
    x = pylucid.ones(2, requires_grad=True)
    y = x * 2 + x * 3
    a = [n for n0, _ in y.grad_fn.next_functions for n, _ in n0.next_functions if n is not None]
    assert len(a) == 2 and a[0] is a[1]
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
