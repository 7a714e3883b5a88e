// Scaled dot-product attention over many independent heads, blocked over query rows:
//   s = scale * q k^T + mask (additive; -inf where a key is not attended; j > i when causal),
//   p = softmax(s) per row, lse = logsumexp(s) per row, out = (p * keep / (1 - dropout)) v.
// A row with no attended key (lse = -inf) gives out = 0 and gradient 0 (PyTorch's CPU kernel).
// The forward keeps only lse; the backward recomputes p = exp(s - lse) block by block:
//   dv += pd^T dout, dp = (dout v^T) * keep / (1 - p_drop), ds = p * (dp - rowsum(dout * out)),
//   dq = scale * ds k, dk += scale * ds^T q, dmask = ds.
// Operands are per-head base offsets (broadcast batch dims and grouped-query heads resolve to
// offsets in the op layer) with unit element stride and any row stride. Every product runs on one
// register-tile kernel (attention_vec.inc; AVX-512, AVX2 and baseline copies picked at run time);
// causal blocks skip the tiles past the diagonal. The forward splits (head, block of query rows)
// items over OpenMP threads by their causal cost, the backward splits heads; each thread keeps its
// scratch (k^T, v^T, a block's scores) in its own buffers. float64 accumulates in double.
#pragma once
#include <cstdint>

namespace lucid::kernels {

template <class T>
struct AttnArgs {
  int64_t heads = 0, L = 0, S = 0, E = 0, Ev = 0;
  const T *q = nullptr, *k = nullptr, *v = nullptr;
  const int64_t *q_off = nullptr, *k_off = nullptr, *v_off = nullptr;  // per head, in elements
  int64_t q_ld = 0, k_ld = 0, v_ld = 0;                                 // row strides
  const T* mask = nullptr;  // additive mask (nullptr: none), read at m_off[h] + i * m_ls + j * m_ss
  const int64_t* m_off = nullptr;
  int64_t m_ls = 0, m_ss = 0;
  T scale = 1;
  bool causal = false;       // key j is attended by query i only when j <= i (top-left aligned)
  const bool* keep = nullptr;  // dropout keep mask, contiguous (heads, L, S); nullptr: no dropout
  T keep_scale = 1;          // 1 / (1 - dropout_p)
};

// out: contiguous (heads, L, Ev); lse: contiguous (heads, L).
template <class T>
void attention_forward(const AttnArgs<T>& a, T* out, T* lse);

// Gradient destinations, contiguous per head and written (not accumulated): dq (heads, L, E),
// dk (heads, S, E), dv (heads, S, Ev), dmask (heads, L, S) or nullptr. Heads that share a k, v or
// mask in the forward get separate slices here; the op layer sums them back.
template <class T>
struct AttnGrads {
  T *dq = nullptr, *dk = nullptr, *dv = nullptr, *dmask = nullptr;
};

// gout and out: contiguous (heads, L, Ev); lse from the forward.
template <class T>
void attention_backward(const AttnArgs<T>& a, const T* out, const T* lse, const T* gout, const AttnGrads<T>& g);

}  // namespace lucid::kernels
