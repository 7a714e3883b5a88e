"""The DCGAN tutorial at toy size: a Generator of ConvTranspose2d + BatchNorm2d + ReLU ending in
Tanh and a Discriminator of strided Conv2d + BatchNorm2d + LeakyReLU(0.2, inplace=True) ending
in Sigmoid, weights_init applied with model.apply that dispatches on
m.__class__.__name__.find('Conv') / find('BatchNorm'), nn.BCELoss with torch.full((b,),
real_label, dtype=torch.float) labels and label.fill_(fake_label), fixed_noise for progress
images, Adam(betas=(0.5, 0.999)), D(x).mean().item() / D(G(z)) statistics, and the
Generator's output range and a vutils-free image grid made with torch.cat/permute."""
import random

import torch
import torch.nn as nn
import torch.optim as optim

manualSeed = 999
random.seed(manualSeed)
torch.manual_seed(manualSeed)
torch.use_deterministic_algorithms(True)

nc, nz, ngf, ndf = 1, 16, 8, 8
image_size, batch_size, num_epochs, lr, beta1 = 16, 16, 3, 0.0002, 0.5
ngpu = 0
device = torch.device("cuda:0" if (torch.cuda.is_available() and ngpu > 0) else "cpu")


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input)


netG = Generator(ngpu).to(device)
if (device.type == 'cuda') and (ngpu > 1):
    netG = nn.DataParallel(netG, list(range(ngpu)))
netG.apply(weights_init)
print(netG)
netD = Discriminator(ngpu).to(device)
netD.apply(weights_init)
print(netD)
print("G params", sum(p.numel() for p in netG.parameters()), "D params", sum(p.numel() for p in netD.parameters()))
print("init stats", round(netG.main[0].weight.std().item(), 5), round(netG.main[1].weight.mean().item(), 5))

# "real" images: blurry bright squares at random places, scaled to [-1, 1] like Normalize((0.5,), (0.5,))
def real_batch(n):
    imgs = torch.zeros(n, 1, image_size, image_size)
    for i in range(n):
        r, c = random.randint(0, 8), random.randint(0, 8)
        imgs[i, 0, r:r + 8, c:c + 8] = 1.0
    return imgs * 2 - 1


dataset = [real_batch(batch_size) for _ in range(8)]
criterion = nn.BCELoss()
fixed_noise = torch.randn(16, nz, 1, 1, device=device)
real_label, fake_label = 1., 0.
optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))

img_list, G_losses, D_losses = [], [], []
iters = 0
print("Starting Training Loop...")
for epoch in range(num_epochs):
    for i, data in enumerate(dataset, 0):
        netD.zero_grad()
        real_cpu = data.to(device)
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = torch.randn(b_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        if i % 4 == 0:
            print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
                  % (epoch, num_epochs, i, len(dataset), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
        G_losses.append(errG.item())
        D_losses.append(errD.item())
        if (iters % 10 == 0) or ((epoch == num_epochs - 1) and (i == len(dataset) - 1)):
            with torch.no_grad():
                fake = netG(fixed_noise).detach().cpu()
            img_list.append(fake)
        iters += 1

print("snapshots", len(img_list), tuple(img_list[-1].shape))
last = img_list[-1]
print("range", round(last.min().item(), 4), round(last.max().item(), 4), "mean", round(last.mean().item(), 5))
# a 4x4 grid of the 16 samples, as vutils.make_grid(padding=0) lays them out
grid = last.view(4, 4, image_size, image_size).permute(0, 2, 1, 3).reshape(4 * image_size, 4 * image_size)
grid = torch.cat([grid, torch.ones(4 * image_size, 1)], dim=1)
print("grid", tuple(grid.shape), round(((grid + 1) / 2).clamp(0, 1).mean().item(), 5))
print("G loss first/last %.4f %.4f" % (G_losses[0], G_losses[-1]))
netG.eval()
with torch.no_grad():
    print("eval-mode sample mean %.5f" % netG(fixed_noise[:4]).mean().item())
print("BN running var", [round(v, 5) for v in netG.main[1].running_var[:4].tolist()])
