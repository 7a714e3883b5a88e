"""A small encoder-decoder for semantic segmentation in the SegNet style: MaxPool2d with
return_indices=True in the encoder and nn.MaxUnpool2d with those indices (and output_size) in
the decoder, per-pixel nn.CrossEntropyLoss on (N, C, H, W) logits with a class weight and an
ignore_index border, pixel accuracy and per-class IoU from a confusion matrix built with
torch.bincount, an LPPool2d + Flatten auxiliary "is there an object" head, and single-image
inference after img.unsqueeze_(0)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)
H = W = 16
n_classes, ignore = 3, 255


def make_sample(g):
    """Background 0, a square of class 1 and a disc of class 2 at random places; a 1-pixel
    border of the label is 'ignore'."""
    img = torch.randn(1, H, W, generator=g) * 0.3
    lab = torch.zeros(H, W, dtype=torch.long)
    r, c = torch.randint(1, 9, (2,), generator=g).tolist()
    lab[r:r + 5, c:c + 5] = 1
    img[0, r:r + 5, c:c + 5] += 1.0
    cy, cx = torch.randint(4, 12, (2,), generator=g).tolist()
    yy, xx = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= 6
    lab[disc] = 2
    img[0][disc] -= 1.0
    lab[0, :] = ignore
    lab[-1, :] = ignore
    return img, lab


g = torch.Generator().manual_seed(0)
samples = [make_sample(g) for _ in range(48)]
images = torch.stack([s[0] for s in samples])
labels = torch.stack([s[1] for s in samples])
print("images", tuple(images.shape), "labels", tuple(labels.shape), labels.dtype)
print("label counts", torch.bincount(labels[labels != ignore].flatten(), minlength=n_classes).tolist())


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.MaxPool2d(2, 2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2, 2)
        self.dec2 = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.dec1 = nn.Conv2d(8, n_classes, 3, padding=1)
        self.aux = nn.Sequential(nn.LPPool2d(2, 2), nn.Flatten(), nn.Linear(16 * 2 * 2, 1))

    def forward(self, x):
        x = self.enc1(x)
        size1 = x.size()
        x, idx1 = self.pool(x)
        x = self.enc2(x)
        size2 = x.size()
        x, idx2 = self.pool(x)
        aux = self.aux(x)
        x = self.unpool(x, idx2, output_size=size2)
        x = self.dec2(x)
        x = self.unpool(x, idx1, output_size=size1)
        return self.dec1(x), aux.squeeze(1)


model = SegNet()
print(model)
weights = torch.tensor([0.5, 1.0, 1.5])
criterion = nn.CrossEntropyLoss(weight=weights, ignore_index=ignore)
has_object = torch.ones(len(images))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(6):
    model.train()
    perm = torch.randperm(len(images))
    total = 0.0
    for i in range(0, len(images), 16):
        idx = perm[i:i + 16]
        logits, aux = model(images[idx])
        loss = criterion(logits, labels[idx]) + 0.1 * F.binary_cross_entropy_with_logits(aux, has_object[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / 3:.5f}")


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    pred = model(x)[0].argmax(1)
    valid = y != ignore
    acc = (pred[valid] == y[valid]).float().mean().item()
    conf = torch.bincount(y[valid] * n_classes + pred[valid], minlength=n_classes ** 2).view(n_classes, n_classes)
    iou = conf.diag().float() / (conf.sum(0) + conf.sum(1) - conf.diag()).float().clamp(min=1)
    return acc, conf, iou


acc, conf, iou = evaluate(model, images, labels)
print(f"pixel accuracy {acc:.4f}")
print(conf)
print("IoU", [round(v, 4) for v in iou.tolist()], "mIoU %.4f" % iou.mean().item())

img, lab = make_sample(torch.Generator().manual_seed(99))
img.unsqueeze_(0)
print("single image", tuple(img.shape))
with torch.no_grad():
    logits, aux = model(img)
    probs = F.softmax(logits, dim=1)
print("probs sum to one:", torch.allclose(probs.sum(1), torch.ones(1, H, W)))
print("object score %.5f" % torch.sigmoid(aux).item())
pred = probs.argmax(1).squeeze_(0)
print("predicted class counts", torch.bincount(pred.flatten(), minlength=n_classes).tolist())
print(pred[4:12, 4:12])
