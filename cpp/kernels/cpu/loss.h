// Loss kernels: per-position forward (optionally writing each position's loss, always returning
// the sum and the mean's divisor) and closed-form backward, on contiguous operands.
// Class losses see the input as (outer, classes, inner): position p = (o, i) reads its classes
// at stride `inner`; the target holds one class index (or `classes` probabilities) per position.
// The incoming gradient is either per position (`gl`, reduction 'none') or one scalar already
// divided by the mean's divisor (`scale`, with gl == nullptr). Sums accumulate in double.
// Targets are validated by the op before these run: every index is in [0, classes) or ignored.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

struct LossSum {
  double loss = 0, weight = 0;  // sum of losses; sum of the counted positions' weights
  LossSum& operator+=(const LossSum& o) {
    loss += o.loss, weight += o.weight;
    return *this;
  }
};
struct ClassGeom {
  int64_t outer = 1, classes = 1, inner = 1;
};

// Fused log-softmax + NLL with label smoothing eps and optional class weights w:
//   l = (1 - eps) * w[t] * (lse - x_t) + eps / C * sum_c w_c * (lse - x_c)   (0 when t == ignore)
// writes lse per position (the backward's only saved intermediate).
template <class T>
LossSum cross_entropy_forward(const T* x, const int64_t* t, const T* w, T* loss, acc_t<T>* lse,
                              const ClassGeom& g, int64_t ignore, double eps);
// gx_c = s * ((1 - eps) * w[t] * (p_c - [c == t]) + eps / C * (p_c * sum(w) - w_c)), p = exp(x - lse).
template <class T>
void cross_entropy_backward(const T* x, const int64_t* t, const T* w, const acc_t<T>* lse, const T* gl,
                            double scale, T* gx, const ClassGeom& g, int64_t ignore, double eps);

// Class-probability targets q (smoothed: q' = (1 - eps) q + eps / C): l = -sum_c w_c q'_c (x_c - lse).
template <class T>
LossSum cross_entropy_prob_forward(const T* x, const T* q, const T* w, T* loss, acc_t<T>* lse,
                                   const ClassGeom& g, double eps);
// gx_c = s * (p_c * sum_k w_k q'_k - w_c q'_c);  gq_c = -s * (1 - eps) * w_c * (x_c - lse).
template <class T>
void cross_entropy_prob_backward(const T* x, const T* q, const T* w, const acc_t<T>* lse, const T* gl,
                                 double scale, T* gx, T* gq, const ClassGeom& g, double eps);

// The backward of either cross-entropy backward (create_graph). Both first-order forms are
// gx_c = s (p_c sum(a) - a_c) with a_c = w_c q'_c (probabilities) or w_c eps / C + [c == t] (1 - eps) w_t
// (indices), and gq_c = -s (1 - eps) w_c log p_c. With u, uq the gradients arriving for gx, gq
// (either may be null), per position:
//   d_s   = sum(a) sum(u p) - sum(u a) - (1 - eps) sum(uq w log p)     (written to d_s[p], acc type)
//   d_x_c = s (sum(a) p_c (u_c - sum(u p)) - (1 - eps) (uq_c w_c - p_c sum(uq w)))
//   d_q_c = s (1 - eps) w_c (sum(u p) - u_c)                            (probabilities only)
// Exactly one of t, q is given; d_s, d_x, d_q may be null.
template <class T>
void cross_entropy_double_backward(const T* x, const int64_t* t, const T* q, const T* w, const acc_t<T>* lse,
                                   const T* gl, double scale, const T* u, const T* uq, acc_t<T>* d_s, T* d_x,
                                   T* d_q, const ClassGeom& g, int64_t ignore, double eps);

// l = -w[t] * x_t (0 when t == ignore); backward writes every element of gx.
template <class T>
LossSum nll_loss_forward(const T* x, const int64_t* t, const T* w, T* loss, const ClassGeom& g, int64_t ignore);
template <class T>
void nll_loss_backward(const int64_t* t, const T* w, const T* gl, double scale, T* gx, const ClassGeom& g,
                       int64_t ignore);

// Elementwise losses over n elements: Mse (x - t)^2, L1 |x - t|. Backward writes gx = s * dl/dx
// and gt = -gx (either may be null).
enum class Pointwise { Mse, L1 };
template <class T>
double pointwise_loss_forward(Pointwise kind, int64_t n, const T* x, const T* t, T* loss);
template <class T>
void pointwise_loss_backward(Pointwise kind, int64_t n, const T* x, const T* t, const T* gl, double scale, T* gx,
                             T* gt);

// l = w * ((1 - t) x + lw * softplus(-x)), lw = 1 + (pw - 1) t; w, pw expanded to n or null (= 1).
template <class T>
double bce_logits_forward(int64_t n, const T* x, const T* t, const T* w, const T* pw, T* loss);
// Any of gx, gt, gw, gpw may be null (not needed); gw, gpw are per element (the op sums them back).
template <class T>
void bce_logits_backward(int64_t n, const T* x, const T* t, const T* w, const T* pw, const T* gl, double scale,
                         T* gx, T* gt, T* gw, T* gpw);

}  // namespace lucid::kernels
