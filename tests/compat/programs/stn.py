"""The spatial transformer network tutorial at toy size: a localization net (Conv2d, MaxPool2d,
ReLU) and fc_loc regressing 6 affine parameters, fc_loc[2] initialised to the identity with
weight.data.zero_() and bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float)),
F.affine_grid(theta, x.size(), align_corners=False) + F.grid_sample, then a small classifier;
trained with SGD on shifted synthetic blobs; plus grid_sample modes and padding modes."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5)
        self.conv2 = nn.Conv2d(6, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(8 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 3)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(4, 6, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )
        self.fc_loc = nn.Sequential(
            nn.Linear(6 * 3 * 3, 16),
            nn.ReLU(True),
            nn.Linear(16, 3 * 2)
        )
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 6 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 8 * 3 * 3)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def make_data(n):
    labels = torch.randint(0, 3, (n,))
    imgs = torch.zeros(n, 1, 20, 20)
    for i in range(n):
        dy, dx = torch.randint(-3, 4, (2,)).tolist()
        c = labels[i].item()
        r0, c0 = 8 + dy, 8 + dx
        if c == 0:
            imgs[i, 0, r0:r0 + 4, c0:c0 + 4] = 1.0
        elif c == 1:
            imgs[i, 0, r0:r0 + 4, c0 + 1:c0 + 3] = 1.0
        else:
            imgs[i, 0, r0 + 1:r0 + 3, c0:c0 + 4] = 1.0
    return imgs + 0.1 * torch.randn_like(imgs), labels


train_x, train_y = make_data(192)
test_x, test_y = make_data(64)
model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)


def train(epoch):
    model.train()
    for batch_idx in range(0, 192, 32):
        data, target = train_x[batch_idx:batch_idx + 32], train_y[batch_idx:batch_idx + 32]
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
    print('Train Epoch: {} \tLoss: {:.6f}'.format(epoch, loss.item()))


def test():
    with torch.no_grad():
        model.eval()
        output = model(test_x)
        test_loss = F.nll_loss(output, test_y, reduction='sum').item() / 64
        pred = output.max(1, keepdim=True)[1]
        correct = pred.eq(test_y.view_as(pred)).sum().item()
        print('Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'.format(test_loss, correct, 64,
                                                                                  100. * correct / 64))
        return test_loss


test_losses = []
for epoch in range(1, 6):
    train(epoch)
    test_losses.append(test())
assert all(l == l for l in test_losses)

with torch.no_grad():
    theta = model.fc_loc(model.localization(test_x[:2]).view(-1, 54)).view(-1, 2, 3)
print("theta", theta[0].tolist())
img = torch.arange(16.).view(1, 1, 4, 4)
rot = torch.tensor([[[0.0, -1.0, 0.1], [1.0, 0.0, -0.2]]])
for align in (False, True):
    grid = F.affine_grid(rot, (1, 1, 4, 4), align_corners=align)
    print("grid", align, grid[0, 0].tolist())
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=align)
            print(mode, pad, [round(v, 5) for v in out.flatten().tolist()])
