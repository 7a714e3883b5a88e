"""A temporal convolutional network as in the TCN paper's reference code: weight_norm'ed
dilated causal Conv1d with Chomp1d, residual blocks with a 1x1 downsample, normal_(0, 0.01)
init on weight_v... (weight_norm's parameters), trained on the adding problem."""
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm
import torch.nn.functional as F

torch.manual_seed(1111)


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super(Chomp1d, self).__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super(TemporalBlock, self).__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()
        self.init_weights()

    def init_weights(self):
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super(TemporalConvNet, self).__init__()
        layers = []
        num_levels = len(num_channels)
        for i in range(num_levels):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i - 1]
            out_channels = num_channels[i]
            layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1, dilation=dilation_size,
                                     padding=(kernel_size - 1) * dilation_size, dropout=dropout)]
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


class TCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
        super(TCN, self).__init__()
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
        self.linear = nn.Linear(num_channels[-1], output_size)
        self.init_weights()

    def init_weights(self):
        self.linear.weight.data.normal_(0, 0.01)

    def forward(self, x):
        y1 = self.tcn(x)
        return self.linear(y1[:, :, -1])


def data_generator(N, seq_length):
    X_num = torch.rand([N, 1, seq_length])
    X_mask = torch.zeros([N, 1, seq_length])
    Y = torch.zeros([N, 1])
    for i in range(N):
        positions = torch.randperm(seq_length)[:2]
        X_mask[i, 0, positions[0]] = 1
        X_mask[i, 0, positions[1]] = 1
        Y[i, 0] = X_num[i, 0, positions[0]] + X_num[i, 0, positions[1]]
    X = torch.cat((X_num, X_mask), dim=1)
    return X, Y


X_train, Y_train = data_generator(200, 20)
X_test, Y_test = data_generator(50, 20)
model = TCN(2, 1, [8, 8, 8], kernel_size=3, dropout=0.0)
print("keys", [k for k in model.state_dict().keys()][:6])
print("weight_g shape", tuple(model.tcn.network[0].conv1.weight_g.shape),
      "weight_v shape", tuple(model.tcn.network[0].conv1.weight_v.shape))
optimizer = getattr(torch.optim, "Adam")(model.parameters(), lr=4e-3)
batch_size = 32
tests = []
for ep in range(1, 6):
    model.train()
    total_loss = 0
    for i in range(0, X_train.size(0), batch_size):
        if i + batch_size > X_train.size(0):
            x, y = X_train[i:], Y_train[i:]
        else:
            x, y = X_train[i:(i + batch_size)], Y_train[i:(i + batch_size)]
        optimizer.zero_grad()
        output = model(x)
        loss = F.mse_loss(output, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total_loss += loss.item()
    model.eval()
    with torch.no_grad():
        test_loss = F.mse_loss(model(X_test), Y_test)
    tests.append(test_loss.item())
    print(f"epoch {ep} train {total_loss:.5f} test {test_loss.item():.5f}")

# weight_norm's pieces: weight == g * v / ||v|| along dim 0
conv = model.tcn.network[0].conv1
w = conv.weight_g * conv.weight_v / conv.weight_v.norm(dim=(1, 2), keepdim=True)
print("recomposed", torch.allclose(w, conv.weight, atol=1e-6))
assert tests[-1] < tests[0]
nn.utils.remove_weight_norm(conv)
print("after remove", sorted(n for n, _ in conv.named_parameters()))
