"""The "Dive into Deep Learning" modern-CNN chapters, written its way: lazy layers
(nn.LazyConv2d, nn.LazyLinear, nn.LazyBatchNorm2d) materialised by a dummy forward and then
initialised with net.apply(init_cnn) (xavier_uniform_ on Conv2d/Linear), the layer-by-layer
shape walk `for layer in net: X = layer(X); print(layer.__class__.__name__, 'output shape:\\t',
X.shape)`, batch normalisation written from scratch (batch_norm with torch.is_grad_enabled(),
mean over (0, 2, 3) with keepdim, moving averages kept as plain tensors in a Module) checked
against nn.BatchNorm2d, NiN blocks ending in nn.AdaptiveAvgPool2d((1, 1)) + nn.Flatten(), VGG
blocks, a ResNet Residual with use_1x1conv, a GoogLeNet Inception block concatenating four
branches, DenseNet conv_block/transition_block, and a short training run with SGD."""
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.1)
        return Y


X = torch.randn(4, 3, 5, 5) * 2 + 1
mine = BatchNorm(3, 4)
ref = nn.BatchNorm2d(3)
print("bn train diff", (mine(X) - ref(X)).abs().max().item() < 1e-5)
print("moving mean", mine.moving_mean.reshape(-1), ref.running_mean)
with torch.no_grad():
    y_eval = mine(X)
ref.eval()
print("bn eval", y_eval[0, :, 0, 0], ref(X)[0, :, 0, 0])
print("running_var (unbiased in nn.BatchNorm2d)", mine.moving_var.reshape(-1), ref.running_var)
print("params of scratch BN", [n for n, _ in mine.named_parameters()], list(mine.state_dict().keys()))


def init_cnn(module):
    if type(module) == nn.Linear or type(module) == nn.Conv2d:
        nn.init.xavier_uniform_(module.weight)


def nin_block(out_channels, kernel_size, strides, padding):
    return nn.Sequential(
        nn.LazyConv2d(out_channels, kernel_size, strides, padding), nn.ReLU(),
        nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU(),
        nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU())


def vgg_block(num_convs, out_channels):
    layers = []
    for _ in range(num_convs):
        layers.append(nn.LazyConv2d(out_channels, kernel_size=3, padding=1))
        layers.append(nn.ReLU())
    layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
    return nn.Sequential(*layers)


class Residual(nn.Module):
    def __init__(self, num_channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1, stride=strides)
        self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1, stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.LazyBatchNorm2d()
        self.bn2 = nn.LazyBatchNorm2d()

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


class Inception(nn.Module):
    def __init__(self, c1, c2, c3, c4, **kwargs):
        super(Inception, self).__init__(**kwargs)
        self.b1_1 = nn.LazyConv2d(c1, kernel_size=1)
        self.b2_1 = nn.LazyConv2d(c2[0], kernel_size=1)
        self.b2_2 = nn.LazyConv2d(c2[1], kernel_size=3, padding=1)
        self.b3_1 = nn.LazyConv2d(c3[0], kernel_size=1)
        self.b3_2 = nn.LazyConv2d(c3[1], kernel_size=5, padding=2)
        self.b4_1 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
        self.b4_2 = nn.LazyConv2d(c4, kernel_size=1)

    def forward(self, x):
        b1 = F.relu(self.b1_1(x))
        b2 = F.relu(self.b2_2(F.relu(self.b2_1(x))))
        b3 = F.relu(self.b3_2(F.relu(self.b3_1(x))))
        b4 = F.relu(self.b4_2(self.b4_1(x)))
        return torch.cat((b1, b2, b3, b4), dim=1)


def conv_block(num_channels):
    return nn.Sequential(nn.LazyBatchNorm2d(), nn.ReLU(), nn.LazyConv2d(num_channels, kernel_size=3, padding=1))


class DenseBlock(nn.Module):
    def __init__(self, num_convs, num_channels):
        super(DenseBlock, self).__init__()
        layer = []
        for i in range(num_convs):
            layer.append(conv_block(num_channels))
        self.net = nn.Sequential(*layer)

    def forward(self, X):
        for blk in self.net:
            Y = blk(X)
            X = torch.cat((X, Y), dim=1)
        return X


def transition_block(num_channels):
    return nn.Sequential(nn.LazyBatchNorm2d(), nn.ReLU(), nn.LazyConv2d(num_channels, kernel_size=1),
                         nn.AvgPool2d(kernel_size=2, stride=2))


blk = Residual(3)
X = torch.randn(4, 3, 6, 6)
print("residual", blk(X).shape, Residual(6, use_1x1conv=True, strides=2)(X).shape)
print("inception", Inception(2, (2, 4), (1, 2), 2)(X).shape)
blk = DenseBlock(2, 4)
Y = blk(X)
print("dense", Y.shape, transition_block(5)(Y).shape)

nets = {
    "nin": nn.Sequential(nin_block(8, kernel_size=5, strides=2, padding=2), nn.MaxPool2d(3, stride=2),
                         nn.Dropout(0.5), nin_block(4, kernel_size=3, strides=1, padding=1),
                         nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten()),
    "vgg": nn.Sequential(vgg_block(1, 8), vgg_block(1, 16), nn.Flatten(), nn.LazyLinear(32), nn.ReLU(),
                         nn.Dropout(0.5), nn.LazyLinear(4)),
    "resnet": nn.Sequential(nn.LazyConv2d(8, kernel_size=3, stride=1, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
                            Residual(8), Residual(16, use_1x1conv=True, strides=2),
                            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LazyLinear(4)),
}
imgs = torch.randn(32, 1, 16, 16)
labels = (imgs[:, 0, :8, :8].mean((1, 2)) > 0).long() * 2 + (imgs[:, 0, 8:, 8:].mean((1, 2)) > 0).long()
for name, net in nets.items():
    X = torch.randn(1, 1, 16, 16)
    for layer in net:
        X = layer(X)
        print(layer.__class__.__name__, "output shape:\t", X.shape)
    net.apply(init_cnn)
    print(name, sum(p.numel() for p in net.parameters()))
    print(net[0])
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    torch.manual_seed(3)
    for epoch in range(4):
        net.train()
        loss = F.cross_entropy(net(imgs), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"{name} epoch {epoch} loss {loss.item():.4f}")
    net.eval()
    with torch.no_grad():
        acc = (net(imgs).argmax(axis=1) == labels).float().mean().item()
    print(f"{name} train acc {acc:.3f}")
