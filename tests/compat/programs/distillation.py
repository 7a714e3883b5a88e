"""The knowledge-distillation tutorial at toy size: a deeper teacher and a light student on
synthetic images, the student trained with cross-entropy alone, then with soft targets
(F.softmax(teacher_logits / T), F.log_softmax(student_logits / T), the sum/size * T**2 form and
nn.KLDivLoss(reduction='batchmean')), then with a cosine loss on hidden representations
(nn.CosineEmbeddingLoss with a target of ones, nn.AvgPool1d to match widths) and with an
intermediate-regressor MSE on feature maps; teacher.eval() under torch.no_grad(), parameter
counts with sum(p.numel() ...), and test accuracies."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)


def make_images(n, g):
    y = torch.randint(0, 4, (n,), generator=g)
    x = 0.4 * torch.randn(n, 3, 8, 8, generator=g)
    for c in range(4):
        idx = y == c
        x[idx, c % 3, (c // 2) * 4:(c // 2) * 4 + 4, (c % 2) * 4:(c % 2) * 4 + 4] += 1.0
    return x, y


g = torch.Generator().manual_seed(0)
train_loader = DataLoader(TensorDataset(*make_images(256, g)), batch_size=32, shuffle=True,
                          generator=torch.Generator().manual_seed(1))
test_loader = DataLoader(TensorDataset(*make_images(128, g)), batch_size=64, shuffle=False)


class DeepNN(nn.Module):
    def __init__(self, num_classes=4):
        super(DeepNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(16, 8, kernel_size=3, padding=1), nn.ReLU(),
        )
        self.classifier = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, num_classes))

    def forward(self, x):
        x = self.features(x)
        flattened = torch.flatten(x, 1)
        x = self.classifier(flattened)
        return x, flattened


class LightNN(nn.Module):
    def __init__(self, num_classes=4):
        super(LightNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.features(x)
        flattened = torch.flatten(x, 1)
        x = self.classifier(flattened)
        return x, flattened


def train(model, loader, epochs, lr):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in loader:
            optimizer.zero_grad()
            outputs, _ = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(f"Epoch {epoch + 1}/{epochs}, Loss: {running_loss / len(loader):.5f}")


def test(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for inputs, labels in loader:
            outputs, _ = model(inputs)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    accuracy = 100 * correct / total
    print(f"Test Accuracy: {accuracy:.2f}%")
    return accuracy


teacher = DeepNN()
train(teacher, train_loader, epochs=3, lr=0.003)
test_accuracy_deep = test(teacher, test_loader)
torch.manual_seed(42)
student_plain = LightNN()
torch.manual_seed(42)
student_kd = LightNN()
print("Norm of 1st layer of the initial lightweight model:", round(torch.norm(student_plain.features[0].weight).item(), 5))
print("Norm of 1st layer of the new lightweight model:", round(torch.norm(student_kd.features[0].weight).item(), 5))
total_params_deep = "{:,}".format(sum(p.numel() for p in teacher.parameters()))
total_params_light = "{:,}".format(sum(p.numel() for p in student_plain.parameters()))
print(f"DeepNN parameters: {total_params_deep}, LightNN parameters: {total_params_light}")
train(student_plain, train_loader, epochs=3, lr=0.003)
test_accuracy_light_ce = test(student_plain, test_loader)


def train_knowledge_distillation(teacher, student, loader, epochs, lr, T, soft_target_loss_weight, ce_loss_weight):
    ce_loss = nn.CrossEntropyLoss()
    kl = nn.KLDivLoss(reduction="batchmean")
    optimizer = torch.optim.Adam(student.parameters(), lr=lr)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                teacher_logits, _ = teacher(inputs)
            student_logits, _ = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T ** 2)
            kl_form = kl(soft_prob, soft_targets) * (T ** 2)
            assert abs(kl_form.item() - soft_targets_loss.item()) < 1e-4
            label_loss = ce_loss(student_logits, labels)
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(f"Epoch {epoch + 1}/{epochs}, Loss: {running_loss / len(loader):.5f}")


train_knowledge_distillation(teacher=teacher, student=student_kd, loader=train_loader, epochs=3, lr=0.003, T=2,
                             soft_target_loss_weight=0.25, ce_loss_weight=0.75)
test_accuracy_light_ce_and_kd = test(student_kd, test_loader)


def train_cosine_loss(teacher, student, loader, epochs, lr, hidden_rep_loss_weight, ce_loss_weight):
    ce_loss = nn.CrossEntropyLoss()
    cosine_loss = nn.CosineEmbeddingLoss()
    pool = nn.AvgPool1d(kernel_size=4)
    optimizer = torch.optim.Adam(student.parameters(), lr=lr)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                _, teacher_hidden = teacher(inputs)
            student_logits, student_hidden = student(inputs)
            teacher_hidden = pool(teacher_hidden.unsqueeze(1)).squeeze(1)
            hidden_rep_loss = cosine_loss(student_hidden, teacher_hidden, target=torch.ones(inputs.size(0)))
            label_loss = ce_loss(student_logits, labels)
            loss = hidden_rep_loss_weight * hidden_rep_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        print(f"Epoch {epoch + 1}/{epochs}, Loss: {running_loss / len(loader):.5f}")


torch.manual_seed(42)
student_cos = LightNN()
train_cosine_loss(teacher, student_cos, train_loader, epochs=2, lr=0.003, hidden_rep_loss_weight=0.25,
                  ce_loss_weight=0.75)
test_accuracy_light_cos = test(student_cos, test_loader)


class ModifiedLightNNRegressor(LightNN):
    def __init__(self, num_classes=4):
        super().__init__(num_classes)
        self.regressor = nn.Sequential(nn.Conv2d(8, 8, kernel_size=3, padding=1))

    def forward(self, x):
        x = self.features(x)
        regressor_output = self.regressor(x)
        x = torch.flatten(x, 1)
        return self.classifier(x), regressor_output


torch.manual_seed(42)
student_reg = ModifiedLightNNRegressor()
mse = nn.MSELoss()
ce = nn.CrossEntropyLoss()
opt = torch.optim.Adam(student_reg.parameters(), lr=0.003)
teacher.eval()
for epoch in range(2):
    running = 0.0
    for inputs, labels in train_loader:
        opt.zero_grad()
        with torch.no_grad():
            teacher_map = F.adaptive_avg_pool2d(teacher.features(inputs), (2, 2))
        logits, reg = student_reg(inputs)
        loss = 0.25 * mse(reg, teacher_map) + 0.75 * ce(logits, labels)
        loss.backward()
        opt.step()
        running += loss.item()
    print(f"regressor epoch {epoch + 1} loss {running / len(train_loader):.5f}")
print(f"Teacher accuracy: {test_accuracy_deep:.2f}%")
print(f"Student accuracy without teacher: {test_accuracy_light_ce:.2f}%")
print(f"Student accuracy with CE + KD: {test_accuracy_light_ce_and_kd:.2f}%")
print(f"Student accuracy with CE + CosineLoss: {test_accuracy_light_cos:.2f}%")
