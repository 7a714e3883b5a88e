"""The same workloads in pylucid, PyTorch, JAX (``jax.jit``) and MLX, in one run, in one table.

Each framework runs only if it imports (``pip install pylucid[bench]`` brings JAX; PyTorch is left
out of the extra because its default Linux wheel pulls in CUDA: install its CPU-only build
yourself). MLX, when present, runs the
per-op case only. Workloads:

- per-op overhead: ``a + b`` on 4x4 float32 (eager dispatch; under ``jit`` a compiled call);
- rms_norm and GroupRMSNorm (16 contiguous groups) forward, and forward + backward, at a small
  (64, 512) and a large (4096, 4096) float32 shape; PyTorch and JAX run the composite
  (RMS per group of a reshaped view), as neither has a fused GroupRMSNorm;
- MLP training steps (Linear -> RMSNorm -> ReLU per hidden layer, cross-entropy, Adam):
  784-256-256-10 at batch 128 and the tiny 2-32-32-2 at batch 32;
- the ``char_lm`` example's step (TinyLlama: embedding, 2 pre-norm blocks of rotary causal
  attention and SwiGLU, tied head; AdamW; batch 16 x 64 characters).

JAX runs each workload as one ``jax.jit``-compiled function (the train steps include the
optimizer update) and waits for its result. Reported: median time per call over ``--repeats``
blocks, and for each other framework its time divided by pylucid's (> 1 means pylucid is faster).
Threads: pylucid and PyTorch use ``--threads`` (default: pylucid's own default); XLA and MLX
keep their own pools.

    python bench/compare.py [--repeats 7] [--only mlp,char_lm] [--libs torch,jax] [--threads 2] [--plot compare.png]
"""
import argparse
import math
import statistics
import time

import numpy as np

import pylucid

EPS = 1e-6
NORM_SHAPES = {"small": (64, 512), "large": (4096, 4096)}
GROUPS = 16


# ----------------------------------------------------------------------------- frameworks
def load_frameworks():
    fw = {"pylucid": pylucid}
    try:
        import torch

        fw["torch"] = torch
    except ImportError:
        pass
    try:
        import jax

        jax.config.update("jax_platforms", "cpu")
        fw["jax"] = jax
    except ImportError:
        pass
    try:
        import mlx.core  # noqa: F401

        import mlx

        fw["mlx"] = mlx
    except ImportError:
        pass
    return fw


def sync(out):
    """Wait for an asynchronous result (JAX, MLX); eager frameworks are done already."""
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    elif isinstance(out, (tuple, list)):
        for o in out:
            sync(o)
    return out


# ----------------------------------------------------------------------------- workloads
# Each builder takes the framework's module and returns a zero-argument callable, or None when
# the framework cannot run it.


def per_op(name, lib):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    if name in ("pylucid", "torch"):
        x, y = lib.from_numpy(a), lib.from_numpy(b)
        return lambda: x + y
    if name == "jax":
        jnp = lib.numpy
        x, y = jnp.asarray(a), jnp.asarray(b)
        f = lib.jit(lambda p, q: p + q)
        return lambda: sync(f(x, y))
    if name == "mlx":
        mx = lib.core
        x, y = mx.array(a), mx.array(b)
        return lambda: mx.eval(x + y)
    return None


def norm_case(kind, shape, backward):
    """rms_norm (kind 'rms') or GroupRMSNorm (kind 'group') on `shape`, forward or fwd+bwd."""

    def build(name, lib):
        rng = np.random.default_rng(0)
        B, C = shape
        x_np = rng.standard_normal(shape, dtype=np.float32)
        g_np = rng.standard_normal(shape, dtype=np.float32)
        w_np = rng.standard_normal((C if kind == "rms" else GROUPS,), dtype=np.float32)
        if name == "pylucid":
            from pylucid.nn import functional as F

            groups = pylucid.tensor(np.repeat(np.arange(GROUPS), C // GROUPS))
            x, w, g = pylucid.from_numpy(x_np), pylucid.from_numpy(w_np), pylucid.from_numpy(g_np)

            def f(x, w):
                return F.rms_norm(x, C, w, EPS) if kind == "rms" else F.group_rms_norm(x, groups, w, EPS)

            if not backward:
                def fwd():
                    with pylucid.no_grad():
                        return f(x, w)
                return fwd
            xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
            return lambda: pylucid.autograd.grad(f(xg, wg), (xg, wg), g)
        if name == "torch":
            torch = lib
            x, w, g = torch.from_numpy(x_np), torch.from_numpy(w_np), torch.from_numpy(g_np)

            def f(x, w):
                if kind == "rms":
                    return torch.nn.functional.rms_norm(x, (C,), w, EPS)
                xv = x.view(B, GROUPS, C // GROUPS)
                y = xv * torch.rsqrt(xv.pow(2).mean(-1, keepdim=True) + EPS) * w[:, None]
                return y.view(B, C)

            if not backward:
                def fwd():
                    with torch.no_grad():
                        return f(x, w)
                return fwd
            xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
            return lambda: torch.autograd.grad(f(xg, wg), (xg, wg), g)
        if name == "jax":
            jnp = lib.numpy

            def f(x, w):
                if kind == "rms":
                    return x * lib.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + EPS) * w
                xv = x.reshape(B, GROUPS, C // GROUPS)
                y = xv * lib.lax.rsqrt(jnp.mean(xv * xv, -1, keepdims=True) + EPS) * w[:, None]
                return y.reshape(B, C)

            x, w, g = jnp.asarray(x_np), jnp.asarray(w_np), jnp.asarray(g_np)
            if not backward:
                jf = lib.jit(f)
                return lambda: sync(jf(x, w))

            def fb(x, w, g):
                _, vjp = lib.vjp(f, x, w)
                return vjp(g)

            jfb = lib.jit(fb)
            return lambda: sync(jfb(x, w, g))
        return None

    return build


def mlp_case(dims, batch):
    def build(name, lib):
        rng = np.random.default_rng(0)
        x_np = rng.standard_normal((batch, dims[0])).astype(np.float32)
        y_np = rng.integers(0, dims[-1], batch)
        if name in ("pylucid", "torch"):
            nn, F = lib.nn, lib.nn.functional
            lib.manual_seed(0)
            layers = []
            for i in range(len(dims) - 2):
                layers += [nn.Linear(dims[i], dims[i + 1]), nn.RMSNorm(dims[i + 1], eps=EPS), nn.ReLU()]
            layers.append(nn.Linear(dims[-2], dims[-1]))
            model = nn.Sequential(*layers)
            opt = lib.optim.Adam(model.parameters(), lr=1e-3)
            x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)

            def step():
                opt.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss

            return step
        if name == "jax":
            jax, jnp = lib, lib.numpy
            params = []
            for i in range(len(dims) - 1):
                bound = 1 / math.sqrt(dims[i])
                layer = {"w": jnp.asarray(rng.uniform(-bound, bound, (dims[i], dims[i + 1])), jnp.float32),
                         "b": jnp.asarray(rng.uniform(-bound, bound, dims[i + 1]), jnp.float32)}
                if i < len(dims) - 2:
                    layer["g"] = jnp.ones(dims[i + 1], jnp.float32)
                params.append(layer)

            def loss_fn(params, x, y):
                h = x
                for layer in params[:-1]:
                    h = h @ layer["w"] + layer["b"]
                    h = h * jax.lax.rsqrt(jnp.mean(h * h, -1, keepdims=True) + EPS) * layer["g"]
                    h = jax.nn.relu(h)
                logits = h @ params[-1]["w"] + params[-1]["b"]
                logp = jax.nn.log_softmax(logits)
                return -jnp.mean(jnp.take_along_axis(logp, y[:, None], 1))

            return jax_train_step(jax, loss_fn, params, jnp.asarray(x_np), jnp.asarray(y_np), lr=1e-3,
                                  betas=(0.9, 0.999), weight_decay=0.0)
        return None

    return build


def jax_train_step(jax, loss_fn, params, x, y, lr, betas, weight_decay):
    """A jitted step: value_and_grad + Adam(W) with bias correction, state carried between calls."""
    jnp = jax.numpy
    b1, b2 = betas
    tmap = jax.tree_util.tree_map

    @jax.jit
    def update(params, m, v, t, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def upd(p, m, v):
            p = p * (1 - lr * weight_decay)
            return p - lr * (m / c1) / (jnp.sqrt(v / c2) + 1e-8)

        return tmap(upd, params, m, v), m, v, t, loss

    state = [params, tmap(jnp.zeros_like, params), tmap(jnp.zeros_like, params), jnp.float32(0)]

    def step():
        *new, loss = update(*state, x, y)
        state[:] = new
        return sync(loss)

    return step


# char_lm: TinyLlama from pylucid.examples.char_lm, and the same model written for PyTorch / JAX.
LM = {"vocab": 40, "dim": 64, "n_layers": 2, "n_heads": 4, "seq": 64, "batch": 16}


def rope_np(seq_len, head_dim, base=10000.0):
    inv = 1.0 / base ** (np.arange(0, head_dim, 2) / head_dim)
    ang = np.outer(np.arange(seq_len), inv)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def torch_tiny_llama(torch):
    nn, F = torch.nn, torch.nn.functional
    dim, n_heads, seq = LM["dim"], LM["n_heads"], LM["seq"]
    hidden = 32 * math.ceil(8 * dim / 3 / 32)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim, bias=False)
            self.proj = nn.Linear(dim, dim, bias=False)

        def forward(self, x, cos, sin, mask):
            B, T, C = x.shape
            qkv = self.qkv(x).reshape(B, T, 3, n_heads, C // n_heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]

            def rope(t):
                t1, t2 = t.chunk(2, dim=-1)
                return torch.cat([t1 * cos - t2 * sin, t1 * sin + t2 * cos], dim=-1)

            q, k = rope(q), rope(k)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // n_heads))
            att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm, self.mlp_norm = nn.RMSNorm(dim, eps=EPS), nn.RMSNorm(dim, eps=EPS)
            self.attn = Attention()
            self.w1 = nn.Linear(dim, hidden, bias=False)
            self.w3 = nn.Linear(dim, hidden, bias=False)
            self.w2 = nn.Linear(hidden, dim, bias=False)

        def forward(self, x, cos, sin, mask):
            x = x + self.attn(self.attn_norm(x), cos, sin, mask)
            h = self.mlp_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class TinyLlama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(LM["vocab"], dim)
            nn.init.normal_(self.embed.weight, std=0.02)
            self.blocks = nn.ModuleList([Block() for _ in range(LM["n_layers"])])
            self.norm = nn.RMSNorm(dim, eps=EPS)
            cos, sin = rope_np(seq, dim // n_heads)
            self.register_buffer("cos", torch.from_numpy(cos), persistent=False)
            self.register_buffer("sin", torch.from_numpy(sin), persistent=False)
            self.register_buffer("causal", torch.ones(seq, seq).tril() == 0, persistent=False)

        def forward(self, idx):
            x = self.embed(idx)
            for b in self.blocks:
                x = b(x, self.cos, self.sin, self.causal)
            return F.linear(self.norm(x), self.embed.weight)

    return TinyLlama()


def char_lm_case(name, lib):
    rng = np.random.default_rng(0)
    V, B, T = LM["vocab"], LM["batch"], LM["seq"]
    x_np = rng.integers(0, V, (B, T))
    y_np = rng.integers(0, V, (B, T))
    if name in ("pylucid", "torch"):
        lib.manual_seed(0)
        if name == "pylucid":
            from pylucid.examples.char_lm import TinyLlama

            model = TinyLlama(V, dim=LM["dim"], n_layers=LM["n_layers"], n_heads=LM["n_heads"], max_len=T)
        else:
            model = torch_tiny_llama(lib)
        decay = [p for p in model.parameters() if p.ndim >= 2]
        no_decay = [p for p in model.parameters() if p.ndim < 2]
        opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=1e-3, betas=(0.9, 0.95))
        params = list(model.parameters())
        x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
        F = lib.nn.functional

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
            loss.backward()
            lib.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            return loss

        return step
    if name == "jax":
        return jax_char_lm(lib, x_np, y_np)
    return None


def jax_char_lm(jax, x_np, y_np):
    jnp = jax.numpy
    V, dim, H, T = LM["vocab"], LM["dim"], LM["n_heads"], LM["seq"]
    hidden = 32 * math.ceil(8 * dim / 3 / 32)
    rng = np.random.default_rng(0)

    def lin(i, o):
        b = 1 / math.sqrt(i)
        return jnp.asarray(rng.uniform(-b, b, (i, o)), jnp.float32)

    params = {"embed": jnp.asarray(rng.standard_normal((V, dim)) * 0.02, jnp.float32),
              "norm": jnp.ones(dim, jnp.float32), "blocks": []}
    for _ in range(LM["n_layers"]):
        params["blocks"].append({"an": jnp.ones(dim, jnp.float32), "mn": jnp.ones(dim, jnp.float32),
                                 "qkv": lin(dim, 3 * dim), "proj": lin(dim, dim),
                                 "w1": lin(dim, hidden), "w3": lin(dim, hidden), "w2": lin(hidden, dim)})
    cos, sin = (jnp.asarray(t) for t in rope_np(T, dim // H))
    mask = jnp.tril(jnp.ones((T, T), bool))

    def rms(x, g):
        return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + EPS) * g

    def rope(t):
        t1, t2 = jnp.split(t, 2, axis=-1)
        return jnp.concatenate([t1 * cos - t2 * sin, t1 * sin + t2 * cos], axis=-1)

    def loss_fn(p, idx, y):
        B = idx.shape[0]
        x = p["embed"][idx]
        for b in p["blocks"]:
            qkv = (rms(x, b["an"]) @ b["qkv"]).reshape(B, T, 3, H, dim // H).transpose(2, 0, 3, 1, 4)
            q, k, v = rope(qkv[0]), rope(qkv[1]), qkv[2]
            att = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(dim // H))
            att = jax.nn.softmax(jnp.where(mask, att, -jnp.inf), axis=-1)
            x = x + ((att @ v).transpose(0, 2, 1, 3).reshape(B, T, dim)) @ b["proj"]
            h = rms(x, b["mn"])
            x = x + (jax.nn.silu(h @ b["w1"]) * (h @ b["w3"])) @ b["w2"]
        logits = rms(x, p["norm"]) @ p["embed"].T
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[..., None], -1))

    # Gradient clipping to norm 1 and decoupled weight decay on matrices, as the example's step.
    b1, b2, lr = 0.9, 0.95, 1e-3
    tmap = jax.tree_util.tree_map

    @jax.jit
    def update(p, m, v, t, idx, y):
        loss, g = jax.value_and_grad(loss_fn)(p, idx, y)
        norm = jnp.sqrt(sum(jnp.sum(a * a) for a in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        g = tmap(lambda a: a * scale, g)
        t = t + 1
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def upd(p, m, v):
            p = p * (1 - lr * (0.05 if p.ndim >= 2 else 0.0))
            return p - lr * (m / c1) / (jnp.sqrt(v / c2) + 1e-8)

        return tmap(upd, p, m, v), m, v, t, loss

    state = [params, tmap(jnp.zeros_like, params), tmap(jnp.zeros_like, params), jnp.float32(0)]
    idx, y = jnp.asarray(x_np), jnp.asarray(y_np)

    def step():
        *new, loss = update(*state, idx, y)
        state[:] = new
        return sync(loss)

    return step


def workloads():
    w = {"per-op a + b (4x4)": lambda n, lib: per_op(n, lib)}
    for kind, label in (("rms", "rms_norm"), ("group", "GroupRMSNorm")):
        for size, shape in NORM_SHAPES.items():
            for bwd in (False, True):
                key = f"{label} {'fwd+bwd' if bwd else 'fwd'} {shape[0]}x{shape[1]}"
                w[key] = norm_case(kind, shape, bwd)
    w["MLP 784-256-256-10 b128 Adam step"] = mlp_case([784, 256, 256, 10], 128)
    w["MLP 2-32-32-2 b32 Adam step"] = mlp_case([2, 32, 32, 2], 32)
    w["char_lm step (b16 x 64)"] = char_lm_case
    return w


# ----------------------------------------------------------------------------- timing
def timed(fn, repeats, min_block=0.1):
    """Median seconds per call over `repeats` blocks, each block at least `min_block` long."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t >= min_block:
            break
        n *= 2
    blocks = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        blocks.append((time.perf_counter() - t) / n)
    return statistics.median(blocks)


def fmt_time(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def plot(path, names, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    others = [n for n in names if n != "pylucid"]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.5))
    h = 0.8 / max(1, len(others))
    for j, n in enumerate(others):
        ys = [i + j * h for i in range(len(rows))]
        vals = [r[1].get(n, float("nan")) / r[1]["pylucid"] for r in rows]
        ax.barh(ys, vals, height=h, label=f"{n} time / pylucid time")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_yticks([i + 0.4 - h / 2 for i in range(len(rows))])
    ax.set_yticklabels([r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time relative to pylucid (> 1: pylucid is faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names to run")
    ap.add_argument("--threads", type=int, default=0, help="pylucid and torch threads (0: pylucid's default)")
    ap.add_argument("--plot", default="", help="write a bar chart of the ratios to this PNG")
    ap.add_argument("--libs", default="", help="comma-separated frameworks to run besides pylucid (default: all)")
    args = ap.parse_args()
    fw = load_frameworks()
    if args.libs:
        keep = {"pylucid", *(s.strip() for s in args.libs.split(","))}
        fw = {n: m for n, m in fw.items() if n in keep}
    if args.threads and hasattr(pylucid, "set_num_threads"):
        pylucid.set_num_threads(args.threads)
    threads = pylucid.get_num_threads() if hasattr(pylucid, "get_num_threads") else args.threads or None
    if "torch" in fw and threads:
        fw["torch"].set_num_threads(threads)
    names = list(fw)
    vers = ", ".join(f"{n} {getattr(m, '__version__', '?')}" for n, m in fw.items())
    print(f"{vers}; pylucid/torch threads: {threads or 'default'}")
    head = f"{'workload':<36}" + "".join(f"{n:>12}" for n in names) + "".join(f"{n + '/ours':>12}" for n in names[1:])
    print(head)
    rows = []
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    for wname, build in workloads().items():
        if only and not any(s.lower() in wname.lower() for s in only):
            continue
        times = {}
        for n in names:
            fn = build(n, fw[n])
            if fn is not None:
                times[n] = timed(fn, args.repeats)
        line = f"{wname:<36}" + "".join(f"{fmt_time(times[n]) if n in times else '-':>12}" for n in names)
        line += "".join(f"{times[n] / times['pylucid']:>11.2f}x" if n in times else f"{'-':>12}" for n in names[1:])
        print(line, flush=True)
        rows.append((wname, times))
    if args.plot:
        plot(args.plot, names, rows)


if __name__ == "__main__":
    main()
