"""The "optimizers visualised" and "every LR scheduler plotted" blog posts: each torch.optim
optimizer (SGD with momentum / nesterov / dampening, Adagrad with lr_decay, Adadelta, RMSprop
centered with momentum, Rprop, ASGD, Adam with amsgrad, AdamW, Adamax, NAdam with decoupled weight
decay, RAdam) minimising the Rosenbrock function from the same start, their state_dict layout,
add_param_group, per-group options, maximize=True; then the learning-rate curve of each scheduler
(StepLR, MultiStepLR, ExponentialLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR,
CosineAnnealingWarmRestarts with T_mult, CyclicLR triangular2 / exp_range with momentum cycling,
OneCycleLR cos / linear / three_phase, LambdaLR, MultiplicativeLR, SequentialLR, ChainedScheduler,
ReduceLROnPlateau) and scheduler.state_dict() round-trips."""
import torch
from torch.optim import lr_scheduler as S

torch.set_default_dtype(torch.float64)


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


def run(make_opt, steps=150):
    p = torch.tensor([-1.5, 2.0], requires_grad=True)
    opt = make_opt([p])
    path = []
    for i in range(steps):
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        opt.step()
        if i in (0, 1, 9, steps - 1):
            path.append((round(p[0].item(), 6), round(p[1].item(), 6)))
    return path, rosenbrock(p).item(), opt


optimizers = {
    "SGD": lambda ps: torch.optim.SGD(ps, lr=1e-4),
    "SGD momentum": lambda ps: torch.optim.SGD(ps, lr=1e-4, momentum=0.9),
    "SGD nesterov": lambda ps: torch.optim.SGD(ps, lr=1e-4, momentum=0.9, nesterov=True),
    "SGD dampening": lambda ps: torch.optim.SGD(ps, lr=1e-4, momentum=0.9, dampening=0.5, weight_decay=1e-3),
    "Adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.5, lr_decay=1e-3, initial_accumulator_value=0.1),
    "Adadelta": lambda ps: torch.optim.Adadelta(ps, lr=1.0, rho=0.95),
    "RMSprop": lambda ps: torch.optim.RMSprop(ps, lr=1e-3),
    "RMSprop centered": lambda ps: torch.optim.RMSprop(ps, lr=1e-3, centered=True, momentum=0.5),
    "Rprop": lambda ps: torch.optim.Rprop(ps, lr=1e-3, etas=(0.5, 1.2), step_sizes=(1e-6, 0.5)),
    "ASGD": lambda ps: torch.optim.ASGD(ps, lr=1e-4, t0=50),
    "Adam": lambda ps: torch.optim.Adam(ps, lr=0.05),
    "Adam amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.05, amsgrad=True),
    "AdamW": lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
    "Adamax": lambda ps: torch.optim.Adamax(ps, lr=0.05),
    "NAdam": lambda ps: torch.optim.NAdam(ps, lr=0.05, weight_decay=0.01, decoupled_weight_decay=True),
    "RAdam": lambda ps: torch.optim.RAdam(ps, lr=5e-4),
}
for name, make in optimizers.items():
    path, final, opt = run(make)
    print(f"{name:17s} final {final:.6f} path {path}")

print("== optimizer state ==")
_, _, adam = run(optimizers["Adam amsgrad"], steps=3)
sd = adam.state_dict()
print(list(sd.keys()), list(sd["state"].keys()), sorted(sd["state"][0].keys()))
print({k: v for k, v in sd["param_groups"][0].items() if k != "params"}, sd["param_groups"][0]["params"])
print("step", sd["state"][0]["step"])
print(adam)
_, _, asgd = run(optimizers["ASGD"], steps=3)
print(sorted(asgd.state_dict()["state"][0].keys()), asgd.state_dict()["state"][0]["eta"])
_, _, rprop = run(optimizers["Rprop"], steps=3)
print(sorted(rprop.state_dict()["state"][0].keys()), rprop.state_dict()["state"][0]["step_size"])

w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5, "momentum": 0.0}], lr=0.1, momentum=0.9)
opt.add_param_group({"params": [torch.zeros(2, requires_grad=True)], "weight_decay": 0.01})
print([(g["lr"], g["momentum"], g["weight_decay"], len(g["params"])) for g in opt.param_groups])
target = torch.tensor([1.0, -2.0, 3.0])
for _ in range(5):
    opt.zero_grad()
    loss = ((w - target) ** 2).sum() + (b - 1).pow(2).sum()
    loss.backward()
    opt.step()
print("w", w.detach(), "b", b.detach())
m = torch.tensor([0.0], requires_grad=True)
up = torch.optim.Adam([m], lr=0.1, maximize=True)
for _ in range(5):
    up.zero_grad()
    (-(m - 2) ** 2).sum().backward()
    up.step()
print("maximize", m.detach())
try:
    torch.optim.SGD([w], lr=-1.0)
except ValueError as e:
    print("ValueError:", "learning rate" in str(e) or "beta" in str(e))
try:
    torch.optim.Adam([w], betas=(1.0, 0.999))
except ValueError as e:
    print("ValueError:", "learning rate" in str(e) or "beta" in str(e))

print("== schedulers ==")


def curve(make_sched, steps=12, lr=0.1, optim="SGD", metric=None, **okw):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=lr, momentum=0.9, **okw) if optim == "SGD" else torch.optim.Adam([p], lr=lr)
    sched = make_sched(opt)
    lrs, moms = [], []
    for i in range(steps):
        opt.step()
        lrs.append(round(opt.param_groups[0]["lr"], 6))
        moms.append(round(opt.param_groups[0]["momentum"], 4) if "momentum" in opt.param_groups[0] else
                    round(opt.param_groups[0]["betas"][0], 4))
        sched.step(metric[i]) if metric is not None else sched.step()
    return lrs, moms, sched


scheds = {
    "StepLR": lambda o: S.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda o: S.MultiStepLR(o, milestones=[2, 5, 9], gamma=0.3),
    "ExponentialLR": lambda o: S.ExponentialLR(o, gamma=0.8),
    "ConstantLR": lambda o: S.ConstantLR(o, factor=0.25, total_iters=4),
    "LinearLR": lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5),
    "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=8, power=2.0),
    "CosineAnnealingLR": lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "WarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001),
    "CyclicLR tri2": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2"),
    "CyclicLR exp": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=1,
                                         mode="exp_range", gamma=0.9, base_momentum=0.8, max_momentum=0.95),
    "OneCycle cos": lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=12),
    "OneCycle linear": lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=12, anneal_strategy="linear",
                                              pct_start=0.25, div_factor=10, final_div_factor=100),
    "OneCycle 3phase": lambda o: S.OneCycleLR(o, max_lr=1.0, epochs=3, steps_per_epoch=4, three_phase=True),
    "LambdaLR": lambda o: S.LambdaLR(o, lr_lambda=lambda e: 1 / (1 + e)),
    "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.9),
    "SequentialLR": lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.2, total_iters=3),
                                                 S.ExponentialLR(o, gamma=0.7)], milestones=[3]),
    "Chained": lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3),
                                             S.ExponentialLR(o, gamma=0.9)]),
}
for name, make in scheds.items():
    lrs, moms, sched = curve(make)
    print(f"{name:17s} {lrs}")
    if name.startswith("CyclicLR exp") or name.startswith("OneCycle cos"):
        print(f"{'  momentum':17s} {moms}")
    print(f"{'  last_lr':17s} {[round(v, 6) for v in sched.get_last_lr()]}")
lrs, moms, _ = curve(lambda o: S.OneCycleLR(o, max_lr=0.01, total_steps=12), optim="Adam")
print("OneCycle Adam betas", moms)
metric = [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
lrs, _, plateau = curve(lambda o: S.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1, threshold=0.01,
                                                     cooldown=1, min_lr=0.02), metric=metric)
print("ReduceLROnPlateau", lrs, plateau.num_bad_epochs, plateau.best)
lrs, _, plateau = curve(lambda o: S.ReduceLROnPlateau(o, mode="max", patience=0, threshold_mode="abs"),
                        metric=[0.1 * (i % 3) for i in range(12)])
print("ReduceLROnPlateau max", lrs)

p = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([p], lr=0.1)
sched = S.CosineAnnealingWarmRestarts(opt, T_0=3)
for _ in range(4):
    opt.step()
    sched.step()
state = sched.state_dict()
print(sorted(k for k in state if not k.startswith("_")), state["T_cur"], state["last_epoch"])
opt2 = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
sched2 = S.CosineAnnealingWarmRestarts(opt2, T_0=3)
sched2.load_state_dict(state)
opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
for _ in range(3):
    opt.step()
    sched.step()
    opt2.step()
    sched2.step()
print("resumed schedule equal", sched.get_last_lr() == sched2.get_last_lr(), [round(v, 6) for v in sched.get_last_lr()])
sched.step(1.5)
print("epoch arg", [round(v, 6) for v in sched.get_last_lr()])
