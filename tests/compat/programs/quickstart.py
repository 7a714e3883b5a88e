"""The "Learn the Basics" series end to end (quickstart, tensors, datasets, transforms, build
model, autograd, optimization, save & load) on a synthetic FashionMNIST-shaped dataset: a
custom Dataset with transform/target_transform (a Lambda-style one-hot via
torch.zeros(10).scatter_(0, torch.tensor(y), value=1)), the device picked through
torch.accelerator, NeuralNetwork(nn.Flatten + linear_relu_stack), train_loop/test_loop with
len(dataloader.dataset), f"{loss:>7f}", (pred.argmax(1) == y).type(torch.float).sum().item(),
the named_parameters() listing with param[:2], the autograd tutorial's Jacobian-vector product
and the save/load of state_dict to model.pth."""
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")

labels_map = {0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress", 4: "Coat", 5: "Sandal", 6: "Shirt",
              7: "Sneaker", 8: "Bag", 9: "Ankle Boot"}


class SyntheticFashion(Dataset):
    """28x28 uint8 "images": class c draws a bar at row 2c+3 plus noise."""

    def __init__(self, n, seed, transform=None, target_transform=None):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 10, n)
        imgs = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for i, c in enumerate(self.labels):
            imgs[i, 2 * c + 3:2 * c + 6, 4:24] = 230
        self.imgs = imgs
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = self.imgs[idx]
        label = int(self.labels[idx])
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


def to_tensor(pic):  # what torchvision's ToTensor does for a HxW uint8 array
    return torch.from_numpy(pic).unsqueeze(0).float().div(255)


one_hot = lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)
ds = SyntheticFashion(8, 1, transform=to_tensor, target_transform=one_hot)
img, target = ds[0]
print("sample", img.shape, img.dtype, round(img.mean().item(), 5), target)

training_data = SyntheticFashion(600, 2, transform=to_tensor)
test_data = SyntheticFashion(200, 3, transform=to_tensor)
batch_size = 64
train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=batch_size)
for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
print(f"Label: {labels_map[train_labels[0].item()]}")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 64),
            nn.ReLU(),
            nn.Linear(64, 64),
            nn.ReLU(),
            nn.Linear(64, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)
X = torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
print(f"Model structure: {model}\n\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2, :3] if param.dim() > 1 else param[:2]} \n")

input_image = torch.rand(3, 28, 28)
flat_image = nn.Flatten()(input_image)
hidden1 = nn.ReLU()(nn.Linear(in_features=28 * 28, out_features=20)(flat_image))
print(f"After ReLU: {hidden1[:, :4]}")

# autograd tutorial
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {str(z.grad_fn).split(' object at ')[0]}>")
print(f"Gradient function for loss = {str(loss.grad_fn).split(' object at ')[0]}>")
loss.backward()
print(w.grad)
print(b.grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z_det = (torch.matmul(x, w) + b).detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

# optimization
learning_rate, epochs = 1e-1, 3
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 4 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100 * correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return correct


for t in range(epochs):
    print(f"Epoch {t + 1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    acc = test_loop(test_dataloader, model, loss_fn)
print("Done!")
assert acc > 0.5

path = os.path.join(tempfile.mkdtemp(), "model.pth")
torch.save(model.state_dict(), path)
print("Saved PyTorch Model State to model.pth")
model = NeuralNetwork().to(device)
model.load_state_dict(torch.load(path, weights_only=True))
model.eval()
classes = [labels_map[i] for i in range(10)]
x, y = test_data[0][0], int(test_data[0][1])
with torch.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
