"""A CIFAR-style CNN as the course notebooks write it: Conv2d + BatchNorm2d + ReLU blocks,
nn.Dropout2d and nn.Dropout, nn.AdaptiveAvgPool2d((1, 1)) and torch.flatten(x, 1), weights
initialised by isinstance dispatch in a loop over self.modules() (kaiming_normal_ with
mode="fan_out", constant_ for BatchNorm), tensor-only augmentation (random horizontal flip with
torch.flip on a mask, random crop by padding then slicing, per-channel normalisation with
mean/std broadcast as view(1, 3, 1, 1)), SGD with momentum + MultiStepLR, running loss printed
every few batches, model.eval() evaluation with `_, predicted = torch.max(outputs, 1)` and
`correct += (predicted == labels).sum().item()`, per-class accuracy, the BatchNorm running
statistics and num_batches_tracked, and the eval/train difference of the same batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
classes = ("plane", "car", "bird", "cat")


def make_data(n):
    labels = torch.randint(0, 4, (n,))
    images = torch.rand(n, 3, 12, 12) * 0.4
    for i in range(n):
        c = labels[i].item()
        images[i, c % 3, 2:10, 2:10] += 0.5
        if c == 3:
            images[i, :, 4:8, :] += 0.3
    return images, labels


train_x, train_y = make_data(192)
test_x, test_y = make_data(96)
mean = train_x.mean(dim=(0, 2, 3))
std = train_x.std(dim=(0, 2, 3))
print("mean", mean, "std", std)


def augment(batch):
    flip = torch.rand(batch.size(0)) < 0.5
    batch = batch.clone()
    batch[flip] = torch.flip(batch[flip], dims=[3])
    padded = F.pad(batch, (2, 2, 2, 2))
    out = torch.empty_like(batch)
    for i in range(batch.size(0)):
        dx, dy = torch.randint(0, 5, (2,)).tolist()
        out[i] = padded[i, :, dy:dy + 12, dx:dx + 12]
    return (out - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2, 2),
            nn.Dropout2d(p=0.1),
            nn.Conv2d(8, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        return self.fc(x)


net = Net()
print(net)
print("params", sum(p.numel() for p in net.parameters() if p.requires_grad))
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[3, 5], gamma=0.1)
trainloader = DataLoader(TensorDataset(train_x, train_y), batch_size=32, shuffle=True)
testloader = DataLoader(TensorDataset(test_x, test_y), batch_size=32, shuffle=False)

for epoch in range(6):
    net.train()
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        inputs = augment(inputs)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 3 == 2:
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 3:.3f}")
            running_loss = 0.0
    scheduler.step()
    print("lr", scheduler.get_last_lr(), optimizer.param_groups[0]["lr"])

bn = net.features[1]
print("running_mean", bn.running_mean)
print("running_var", bn.running_var)
print("num_batches_tracked", bn.num_batches_tracked, bn.num_batches_tracked.dtype)

correct = 0
total = 0
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
net.eval()
with torch.no_grad():
    for data in testloader:
        images, labels = data
        images = (images - mean[None, :, None, None]) / std[None, :, None, None]
        outputs = net(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
        for label, prediction in zip(labels, predicted):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1
print(f"Accuracy of the network on the {total} test images: {100 * correct // total} %")
print(f"exact accuracy {100.0 * correct / total:.2f}")
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / total_pred[classname]
    print(f"Accuracy for class: {classname:5s} is {accuracy:.1f} %")
assert correct / total > 0.6

x = (test_x[:4] - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
net.eval()
a = net(x)
b = net(x)
print("eval deterministic", torch.equal(a, b), a.requires_grad, a.grad_fn is not None)
net.train()
torch.manual_seed(5)
c = net(x)
print("train output", c.detach())
probs = F.softmax(a, dim=1)
conf, pred = probs.max(dim=1)
print("confidence", conf.detach(), pred)
print("topk", probs.topk(2, dim=1).indices)
print("argmax equal", torch.equal(a.argmax(dim=1), torch.max(a, 1)[1]), torch.argmax(a, dim=1).dtype)
