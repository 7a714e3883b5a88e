// Random ops: in-place fills (uniform_, normal_, random_/randint_, bernoulli_, exponential_, log_normal_) and
// the samplers bernoulli, multinomial and randperm. Each draws from the Generator passed (null:
// the default generator) in PyTorch's order, so seeded programs reproduce PyTorch's numbers.
// None records a gradient; the fills refuse a tensor that requires grad under grad mode.
#pragma once
#include <cstdint>
#include <optional>

#include "core/generator.h"
#include "core/tensor_impl.h"

namespace lucid {

void manual_seed(uint64_t seed);
uint64_t initial_seed();

TensorImplPtr uniform_(const TensorImplPtr& t, double low, double high, Generator* g = nullptr);
TensorImplPtr normal_(const TensorImplPtr& t, double mean, double std, Generator* g = nullptr);
TensorImplPtr randint_(const TensorImplPtr& t, int64_t low, int64_t high, Generator* g = nullptr);
// PyTorch's random_(): [0, 2^digits] for floats, [0, 2^63) for int64 (no bounds given).
TensorImplPtr random_full_(const TensorImplPtr& t, Generator* g = nullptr);
TensorImplPtr bernoulli_(const TensorImplPtr& t, double p, Generator* g = nullptr);
TensorImplPtr exponential_(const TensorImplPtr& t, double lambda, Generator* g = nullptr);
// exp(N(mean, std)) per element, PyTorch's log_normal_ (std > 0).
TensorImplPtr log_normal_(const TensorImplPtr& t, double mean, double std, Generator* g = nullptr);
// 0/1 samples with per-element probabilities `p` (values in [0, 1]); same shape and dtype as p.
TensorImplPtr bernoulli(const TensorImplPtr& p, Generator* g = nullptr);
// Category indices (int64) drawn from the rows of `probs` (1-d or 2-d, non-negative weights,
// not necessarily normalised): (n,) or (rows, n).
TensorImplPtr multinomial(const TensorImplPtr& probs, int64_t n, bool replacement, Generator* g = nullptr);
TensorImplPtr randperm(int64_t n, DType dtype, Generator* g = nullptr);

// A float in [0, 1) from the default generator (shuffles).
double uniform01();
// mask[i] = (U[0,1) < keep) from the default generator, PyTorch's bernoulli_(keep) (dropout).
void bernoulli_fill(bool* mask, int64_t n, double keep);

}  // namespace lucid
