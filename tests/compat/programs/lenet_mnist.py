"""The classic PyTorch MNIST example (examples/mnist) on synthetic digits: Net with conv1/conv2,
dropout1/dropout2, fc1/fc2, F.max_pool2d, torch.flatten(x, 1), F.log_softmax + F.nll_loss
(reduction='sum' in test), Adadelta(lr=1.0) + StepLR(step_size=1, gamma=0.7),
train(args, model, device, train_loader, optimizer, epoch) with batch_idx % log_interval,
test() printing 'Average loss' and accuracy with 100. * correct / len(...), argparse Namespace
args, transforms-free Normalize((0.1307,), (0.3081,)) by hand, and torch.save(model.state_dict())."""
import argparse
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import TensorDataset, DataLoader


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return correct / len(test_loader.dataset)


def synthetic_digits(n, generator):
    """14x14 images: digit d lights a d-dependent pattern of strokes plus noise."""
    labels = torch.randint(0, 10, (n,), generator=generator)
    imgs = torch.rand(n, 1, 14, 14, generator=generator) * 0.3
    for i in range(n):
        d = labels[i].item()
        imgs[i, 0, d + 2, 2:12] = 1.0
        imgs[i, 0, 2:12, (d * 7) % 10 + 2] = 1.0
    imgs = (imgs - 0.1307) / 0.3081
    return imgs, labels


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=32, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=100, metavar='N')
    parser.add_argument('--epochs', type=int, default=3, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--dry-run', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=5, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=True)
    args = parser.parse_args([])
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_cuda else "cpu")
    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)
    g = torch.Generator().manual_seed(0)
    dataset1 = TensorDataset(*synthetic_digits(320, g))
    dataset2 = TensorDataset(*synthetic_digits(200, g))
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)
    model = Net().to(device)
    print("conv1 weight sum", model.conv1.weight.sum().item(), "fc2 bias", model.fc2.bias[:3].tolist())
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        acc = test(model, device, test_loader)
        scheduler.step()
    assert acc > 0.5
    if args.save_model:
        buf = io.BytesIO()
        torch.save(model.state_dict(), buf)
        buf.seek(0)
        sd = torch.load(buf, weights_only=True)
        print("saved", list(sd.keys()), sd["fc2.bias"].dtype)
        print("optimizer state", sorted(optimizer.state_dict()["state"][0].keys()),
              optimizer.state_dict()["param_groups"][0]["lr"])


if __name__ == '__main__':
    main()
