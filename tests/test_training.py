"""End-to-end training: short runs whose loss must fall, and checkpoint/resume exactness."""
import numpy as np
import pylucid
import pytest
from pylucid import nn, optim
from pylucid.nn import functional as F
from pylucid.optim import lr_scheduler


def blobs(n, seed=0):
    """Three Gaussian blobs in 2-D, one per class."""
    rng = np.random.default_rng(seed)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    y = rng.integers(0, 3, n)
    x = centers[y] + 0.6 * rng.standard_normal((n, 2))
    return pylucid.tensor(x.astype(np.float32)), pylucid.tensor(y)


def mlp():
    return nn.Sequential(nn.Linear(2, 32), nn.RMSNorm(32), nn.ReLU(), nn.Linear(32, 32), nn.RMSNorm(32),
                         nn.ReLU(), nn.Linear(32, 3))


@pytest.mark.parametrize("make_opt", [
    lambda ps: optim.Adam(ps, lr=1e-2),
    lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
], ids=["adam", "adamw", "sgd-nesterov"])
def test_classifier_loss_falls(make_opt):
    """Guards against an optimizer/layer combination that does not actually learn."""
    x, y = blobs(256)
    model = mlp()
    opt = make_opt(model.parameters())
    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.3 * first
    with pylucid.no_grad():
        acc = (model(x).argmax(dim=1) == y).float().mean().item()
    assert acc > 0.9


def test_regression_recovers_weights_with_schedule_and_clipping():
    """Guards against clipping or scheduling that stalls a plain least-squares fit."""
    rng = np.random.default_rng(1)
    w_true = rng.standard_normal((3, 1))
    xs = rng.standard_normal((128, 3))
    x = pylucid.tensor(xs.astype(np.float32))
    y = pylucid.tensor((xs @ w_true + 0.5).astype(np.float32))
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=150, eta_min=0.01)
    for _ in range(150):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
    np.testing.assert_allclose(model.weight.detach().numpy().ravel(), w_true.ravel(), atol=1e-3)
    assert abs(model.bias.item() - 0.5) < 1e-3 and loss.item() < 1e-5


def test_embedding_sequence_model_learns():
    """Guards against embedding gradients (scatter-add of repeated indices) breaking training:
    the label is whether token 3 occurs in a sequence of 6 tokens."""
    rng = np.random.default_rng(2)
    seqs = rng.integers(0, 8, (256, 6))
    labels = (seqs == 3).any(axis=1).astype(np.float32)
    x, y = pylucid.tensor(seqs), pylucid.tensor(labels)
    emb, head = nn.Embedding(8, 16), nn.Linear(16, 1)
    opt = optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=3e-2)
    for step in range(120):
        opt.zero_grad()
        h = emb(x).amax(dim=1)  # (B, 16): any-token features
        loss = F.binary_cross_entropy_with_logits(head(h).reshape(-1), y)
        loss.backward()
        opt.step()
    with pylucid.no_grad():
        pred = (head(emb(x).amax(dim=1)).reshape(-1) > 0).float()
    assert (pred == y).float().mean().item() > 0.95


def test_checkpoint_resume_is_bit_exact(tmp_path):
    """Guards against a save/load cycle that perturbs training: resuming from a checkpoint must
    reproduce the uninterrupted run bit for bit (weights, Adam moments, step counts, LR)."""
    x, y = blobs(64, seed=3)

    def steps(model, opt, sched, n):
        for _ in range(n):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            sched.step()

    def fresh():
        pylucid.manual_seed(42)
        model = mlp()
        opt = optim.Adam(model.parameters(), lr=1e-2)
        return model, opt, lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)

    m1, o1, s1 = fresh()
    steps(m1, o1, s1, 10)

    m2, o2, s2 = fresh()
    steps(m2, o2, s2, 5)
    pylucid.save({"model": m2.state_dict(), "optim": o2.state_dict(), "sched": s2.state_dict()},
                 tmp_path / "ckpt.safetensors")
    del m2, o2, s2
    ck = pylucid.load(tmp_path / "ckpt.safetensors")
    m3, o3, s3 = fresh()
    m3.load_state_dict(ck["model"])
    o3.load_state_dict(ck["optim"])
    s3.load_state_dict(ck["sched"])
    steps(m3, o3, s3, 5)
    for (n, a), (_, b) in zip(m1.state_dict().items(), m3.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    assert o1.param_groups[0]["lr"] == o3.param_groups[0]["lr"]


def test_training_in_float64_and_eval_mode():
    """Guards against .double() leaving parameters the optimizer already holds in float32, and
    against eval mode still dropping units."""
    x, y = blobs(128, seed=4)
    model = nn.Sequential(nn.Linear(2, 16), nn.Dropout(0.2), nn.GELU(), nn.Linear(16, 3)).double()
    opt = optim.Adam(model.parameters(), lr=1e-2)
    xd = x.double()
    for _ in range(40):
        opt.zero_grad()
        loss = F.cross_entropy(model(xd), y)
        loss.backward()
        opt.step()
    assert all(p.dtype == pylucid.float64 for p in model.parameters())
    model.eval()
    with pylucid.no_grad():
        a, b = model(xd), model(xd)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.grad_fn is None
