"""The "60-minute blitz" CIFAR-10 classifier: two Conv2d + MaxPool2d stages and three Linear
layers, trained with SGD (momentum) on CrossEntropyLoss, then evaluated per class. The images
are random CIFAR-shaped tensors whose class is decided by a fixed colour/position pattern, so
the network has something to learn."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

n = 320
images = torch.randn(n, 3, 32, 32) * 0.5
labels = torch.randint(0, 10, (n,))
# Stamp a class-dependent bright square into one channel so the labels are learnable.
for i in range(n):
    c = labels[i].item()
    images[i, c % 3, (c // 3) * 8:(c // 3) * 8 + 8, 4:12] += 1.5


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


net = Net()
print("parameters", sum(p.numel() for p in net.parameters()))
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.02, momentum=0.9)

losses = []
for epoch in range(8):
    running_loss = 0.0
    perm = torch.randperm(n)
    for i in range(0, n, 16):
        idx = perm[i:i + 16]
        inputs, targets = images[idx], labels[idx]
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    losses.append(running_loss / (n // 16))
    print(f"[{epoch + 1}] loss: {losses[-1]:.5f}")

correct = 0
total = 0
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
with torch.no_grad():
    outputs = net(images)
    _, predicted = torch.max(outputs.data, 1)
    total += labels.size(0)
    correct += (predicted == labels).sum().item()
    for label, prediction in zip(labels, predicted):
        if label == prediction:
            correct_pred[classes[label]] += 1
        total_pred[classes[label]] += 1
print(f"Accuracy of the network on the {total} images: {100 * correct // total} %")
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / max(total_pred[classname], 1)
    print(f"Accuracy for class: {classname:5s} is {accuracy:.1f} %")
assert losses[-1] < losses[0]
assert correct / total > 0.5
