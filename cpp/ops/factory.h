// Creation ops: full, arange, linspace, and the seeded random fills (one global Mersenne
// Twister, reseeded by manual_seed) used by rand/randn/randint, nn.init and dropout.
#pragma once
#include <cstdint>

#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr full(const Shape& shape, double value, DType dtype);
TensorImplPtr arange(double start, double end, double step, DType dtype);
TensorImplPtr linspace(double start, double end, int64_t steps, DType dtype);

void manual_seed(uint64_t seed);
uint64_t initial_seed();
// In-place fills (no autograd; refuse a tensor that requires grad under grad mode).
TensorImplPtr uniform_(const TensorImplPtr& t, double low, double high);
TensorImplPtr normal_(const TensorImplPtr& t, double mean, double std);
TensorImplPtr randint_(const TensorImplPtr& t, int64_t low, int64_t high);
TensorImplPtr fill_(const TensorImplPtr& t, double value);
// A float in [0, 1) from the global generator (dropout masks, shuffles).
double uniform01();
// mask[i] = (uniform01() < keep) for i in [0, n), drawn under one lock (bulk dropout masks).
void bernoulli_fill(bool* mask, int64_t n, double keep);

}  // namespace lucid
