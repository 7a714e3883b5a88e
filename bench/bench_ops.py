"""Per-op cost on tiny tensors, where dispatch overhead is everything.

Times `a + b`, `a * a` with grad, and a small forward+backward chain on 4x4 float32 tensors,
side by side with PyTorch (CPU) in the same run when it is installed. Reports microseconds per
call (best of several repeats) and the ratio pylucid / PyTorch (< 1 means pylucid is faster).

    python bench/bench_ops.py [--number 20000] [--repeat 7]
"""
import argparse
import timeit

import pylucid


def cases(lib, t):
    a = t.randn(4, 4)
    b = t.randn(4, 4)
    w = t.randn(4, 4, requires_grad=True)
    x = t.randn(4, 4)

    def add():
        return a + b

    def mul_grad():
        return w * w

    def chain():  # forward + backward through a small expression
        y = ((w * x + a) * w).sum()
        y.backward()
        w.grad = None

    return {"a + b": add, "a * a (grad)": mul_grad, "fwd+bwd chain": chain}


def best(fn, number, repeat):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    mine = cases("pylucid", pylucid)
    theirs = cases("torch", torch) if torch else {}
    print(f"{'case':<16} {'pylucid us':>11} {'torch us':>10} {'ratio':>7}")
    for name, fn in mine.items():
        t1 = best(fn, args.number, args.repeat)
        if torch:
            t2 = best(theirs[name], args.number, args.repeat)
            print(f"{name:<16} {t1:>11.3f} {t2:>10.3f} {t1 / t2:>7.2f}")
        else:
            print(f"{name:<16} {t1:>11.3f} {'-':>10} {'-':>7}")


if __name__ == "__main__":
    main()
