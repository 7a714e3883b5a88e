"""The transfer-learning tutorial's train_model loop on synthetic images, with the data loaded
through DataLoader(num_workers=2) (the batches PyTorch's two workers give), random_split with
fractions and a seeded Generator, model.apply(init_weights), frozen feature parameters,
filter(lambda p: p.requires_grad, ...) into SGD, StepLR, torch.set_grad_enabled(phase ==
'train'), torch.max(outputs, 1), running_corrects.double(), the best weights kept with
copy.deepcopy, and finally a Conv2d + BatchNorm2d pair folded with
torch.nn.utils.fusion.fuse_conv_bn_eval."""
import copy, time
import torch, torch.nn as nn, torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import TensorDataset, DataLoader, random_split
torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
X = torch.randn(120, 3, 16, 16); Y = (X.mean((1, 2, 3)) > 0).long()
full = TensorDataset(X, Y)
train_ds, val_ds = random_split(full, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
dataloaders = {'train': DataLoader(train_ds, batch_size=8, shuffle=True, num_workers=2),
               'val': DataLoader(val_ds, batch_size=8, num_workers=2)}
dataset_sizes = {x: len(d) for x, d in [('train', train_ds), ('val', val_ds)]}
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.AdaptiveAvgPool2d((1, 1)))
        self.fc = nn.Linear(16, 10)
    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))
model_ft = Net()
def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
model_ft.apply(init_weights)
for param in model_ft.features.parameters():
    param.requires_grad = False
num_ftrs = model_ft.fc.in_features
model_ft.fc = nn.Linear(num_ftrs, 2)
criterion = nn.CrossEntropyLoss()
optimizer_ft = optim.SGD(filter(lambda p: p.requires_grad, model_ft.parameters()), lr=0.01, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.1)
def train_model(model, criterion, optimizer, scheduler, num_epochs=4):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    print(f'Best val Acc: {best_acc:4f}')
    model.load_state_dict(best_model_wts)
    return model
model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler)
fused = torch.nn.utils.fusion.fuse_conv_bn_eval(model_ft.features[0].eval(), model_ft.features[1].eval())
print(torch.allclose(fused(X[:2]), model_ft.features[1](model_ft.features[0](X[:2])), atol=1e-5))
