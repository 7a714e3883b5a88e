#include "kernels/cpu/rnn.h"

#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

namespace {
// float: the branch-free vmath forms, which GCC vectorises (std::exp/tanh are scalar calls and
// would dominate a step); double: the library functions.
LUCID_ALWAYS_INLINE float sigmoid(float v) { return sigmoid_f32(v); }
inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }
LUCID_ALWAYS_INLINE float tanh_(float v) { return tanh_f32(v); }
inline double tanh_(double v) { return std::tanh(v); }
}  // namespace

// One batch row; restrict-qualified so GCC vectorises the loop (the gate blocks, the states and
// h never overlap).
template <class T>
LUCID_ALWAYS_INLINE void lstm_row_forward(T* __restrict gi, T* __restrict gf, T* __restrict gg, T* __restrict go,
                             const T* __restrict cp, T* __restrict cb, T* __restrict hb, int64_t H) {
#pragma GCC ivdep
  for (int64_t j = 0; j < H; ++j) {
    const T i = sigmoid(gi[j]), f = sigmoid(gf[j]), g = tanh_(gg[j]), o = sigmoid(go[j]);
    gi[j] = i, gf[j] = f, gg[j] = g, go[j] = o;
    const T cn = f * cp[j] + i * g;
    cb[j] = cn;
    hb[j] = o * tanh_(cn);
  }
}

template <class T>
LUCID_ALWAYS_INLINE void lstm_step_forward_impl(T* gates, const T* c_prev, T* c, T* h, int64_t B, int64_t H, int64_t ldh) {
  for (int64_t b = 0; b < B; ++b) {
    T* gi = gates + b * 4 * H;
    lstm_row_forward(gi, gi + H, gi + 2 * H, gi + 3 * H, c_prev + b * H, c + b * H, h + b * ldh, H);
  }
}

template <class T>
LUCID_ALWAYS_INLINE void lstm_row_backward(const T* __restrict gi, const T* __restrict gf, const T* __restrict gg,
                              const T* __restrict go, const T* __restrict cp, const T* __restrict cb,
                              const T* __restrict dhb, T* __restrict dcb, T* __restrict di, T* __restrict df,
                              T* __restrict dg, T* __restrict dout, int64_t H) {
#pragma GCC ivdep
  for (int64_t j = 0; j < H; ++j) {
    const T i = gi[j], f = gf[j], g = gg[j], o = go[j];
    const T tc = tanh_(cb[j]);
    const T dcj = dcb[j] + dhb[j] * o * (T(1) - tc * tc);
    dout[j] = dhb[j] * tc * o * (T(1) - o);
    di[j] = dcj * g * i * (T(1) - i);
    df[j] = dcj * cp[j] * f * (T(1) - f);
    dg[j] = dcj * i * (T(1) - g * g);
    dcb[j] = dcj * f;
  }
}

template <class T>
LUCID_ALWAYS_INLINE void lstm_step_backward_impl(const T* gates, const T* c_prev, const T* c, const T* dh, T* dc, T* dgates, int64_t B,
                        int64_t H) {
  for (int64_t b = 0; b < B; ++b) {
    const T* gi = gates + b * 4 * H;
    T* di = dgates + b * 4 * H;
    lstm_row_backward(gi, gi + H, gi + 2 * H, gi + 3 * H, c_prev + b * H, c + b * H, dh + b * H, dc + b * H, di,
                      di + H, di + 2 * H, di + 3 * H, H);
  }
}

template <class T>
LUCID_ALWAYS_INLINE void gru_row_forward(T* __restrict gr, T* __restrict gz, T* __restrict gn, const T* __restrict hr,
                            const T* __restrict hz, const T* __restrict hn, const T* __restrict hp,
                            T* __restrict hno, T* __restrict hb, int64_t H) {
#pragma GCC ivdep
  for (int64_t j = 0; j < H; ++j) {
    const T r = sigmoid(gr[j] + hr[j]), z = sigmoid(gz[j] + hz[j]);
    const T n = tanh_(gn[j] + r * hn[j]);
    gr[j] = r, gz[j] = z, gn[j] = n;
    hno[j] = hn[j];
    hb[j] = (T(1) - z) * n + z * hp[j];
  }
}

template <class T>
LUCID_ALWAYS_INLINE void gru_step_forward_impl(T* gates, const T* hw, const T* h_prev, T* hn_out, T* h, int64_t B, int64_t H) {
  for (int64_t b = 0; b < B; ++b) {
    T* gr = gates + b * 3 * H;
    const T* hr = hw + b * 3 * H;
    gru_row_forward(gr, gr + H, gr + 2 * H, hr, hr + H, hr + 2 * H, h_prev + b * H, hn_out + b * H, h + b * H, H);
  }
}

template <class T>
LUCID_ALWAYS_INLINE void gru_step_backward_impl(const T* gates, const T* hn, const T* h_prev, const T* dh, T* dgx, T* dgh, T* dh_prev,
                       int64_t B, int64_t H) {
  for (int64_t b = 0; b < B; ++b) {
    const T* gr = gates + b * 3 * H;
    const T *gz = gr + H, *gn = gr + 2 * H;
    const T* hnb = hn + b * H;
    const T* hp = h_prev + b * H;
    const T* dhb = dh + b * H;
    T* xr = dgx + b * 3 * H;
    T* hr = dgh + b * 3 * H;
    T* dp = dh_prev + b * H;
    for (int64_t j = 0; j < H; ++j) {
      const T r = gr[j], z = gz[j], n = gn[j], d = dhb[j];
      const T dan = d * (T(1) - z) * (T(1) - n * n);
      const T dr = dan * hnb[j] * r * (T(1) - r);
      const T dz = d * (hp[j] - n) * z * (T(1) - z);
      xr[j] = hr[j] = dr;
      xr[H + j] = hr[H + j] = dz;
      xr[2 * H + j] = dan;
      hr[2 * H + j] = dan * r;
      dp[j] = d * z;
    }
  }
}

template <class T>
LUCID_ALWAYS_INLINE void rnn_step_forward_impl(const T* a, T* h, int64_t B, int64_t H, bool relu) {
  const int64_t n = B * H;
  if (relu)
    for (int64_t j = 0; j < n; ++j) h[j] = a[j] > T(0) ? a[j] : T(0);
  else
    for (int64_t j = 0; j < n; ++j) h[j] = tanh_(a[j]);
}

template <class T>
LUCID_ALWAYS_INLINE void rnn_step_backward_impl(const T* h, const T* dh, T* da, int64_t B, int64_t H, bool relu) {
  const int64_t n = B * H;
  if (relu)
    for (int64_t j = 0; j < n; ++j) da[j] = h[j] > T(0) ? dh[j] : T(0);
  else
    for (int64_t j = 0; j < n; ++j) da[j] = dh[j] * (T(1) - h[j] * h[j]);
}

// Each step kernel: one definition for both types; the float one is compiled for AVX-512, for
// AVX2 + FMA and for baseline x86-64 and picked at load time (LUCID_CLONES_AVX512), since the gate
// nonlinearities are a third of an LSTM step.
template <class T>
void lstm_step_forward(T* gates, const T* c_prev, T* c, T* h, int64_t B, int64_t H, int64_t ldh) {
  lstm_step_forward_impl(gates, c_prev, c, h, B, H, ldh);
}
template <>
LUCID_CLONES_AVX512 void lstm_step_forward<float>(float* gates, const float* c_prev, float* c, float* h, int64_t B, int64_t H, int64_t ldh) {
  lstm_step_forward_impl(gates, c_prev, c, h, B, H, ldh);
}
template void lstm_step_forward<double>(double*, const double*, double*, double*, int64_t, int64_t, int64_t);
template <class T>
void lstm_step_backward(const T* gates, const T* c_prev, const T* c, const T* dh, T* dc, T* dgates, int64_t B,
                        int64_t H) {
  lstm_step_backward_impl(gates, c_prev, c, dh, dc, dgates, B, H);
}
template <>
LUCID_CLONES_AVX512 void lstm_step_backward<float>(const float* gates, const float* c_prev, const float* c, const float* dh, float* dc, float* dgates, int64_t B,
                        int64_t H) {
  lstm_step_backward_impl(gates, c_prev, c, dh, dc, dgates, B, H);
}
template void lstm_step_backward<double>(const double*, const double*, const double*, const double*, double*, double*, int64_t, int64_t);
template <class T>
void gru_step_forward(T* gates, const T* hw, const T* h_prev, T* hn_out, T* h, int64_t B, int64_t H) {
  gru_step_forward_impl(gates, hw, h_prev, hn_out, h, B, H);
}
template <>
LUCID_CLONES_AVX512 void gru_step_forward<float>(float* gates, const float* hw, const float* h_prev, float* hn_out, float* h, int64_t B, int64_t H) {
  gru_step_forward_impl(gates, hw, h_prev, hn_out, h, B, H);
}
template void gru_step_forward<double>(double*, const double*, const double*, double*, double*, int64_t, int64_t);
template <class T>
void gru_step_backward(const T* gates, const T* hn, const T* h_prev, const T* dh, T* dgx, T* dgh, T* dh_prev,
                       int64_t B, int64_t H) {
  gru_step_backward_impl(gates, hn, h_prev, dh, dgx, dgh, dh_prev, B, H);
}
template <>
LUCID_CLONES_AVX512 void gru_step_backward<float>(const float* gates, const float* hn, const float* h_prev, const float* dh, float* dgx, float* dgh, float* dh_prev,
                       int64_t B, int64_t H) {
  gru_step_backward_impl(gates, hn, h_prev, dh, dgx, dgh, dh_prev, B, H);
}
template void gru_step_backward<double>(const double*, const double*, const double*, const double*, double*, double*, double*, int64_t, int64_t);
template <class T>
void rnn_step_forward(const T* a, T* h, int64_t B, int64_t H, bool relu) {
  rnn_step_forward_impl(a, h, B, H, relu);
}
template <>
LUCID_CLONES_AVX512 void rnn_step_forward<float>(const float* a, float* h, int64_t B, int64_t H, bool relu) {
  rnn_step_forward_impl(a, h, B, H, relu);
}
template void rnn_step_forward<double>(const double*, double*, int64_t, int64_t, bool);
template <class T>
void rnn_step_backward(const T* h, const T* dh, T* da, int64_t B, int64_t H, bool relu) {
  rnn_step_backward_impl(h, dh, da, B, H, relu);
}
template <>
LUCID_CLONES_AVX512 void rnn_step_backward<float>(const float* h, const float* dh, float* da, int64_t B, int64_t H, bool relu) {
  rnn_step_backward_impl(h, dh, da, B, H, relu);
}
template void rnn_step_backward<double>(const double*, const double*, double*, int64_t, int64_t, bool);

}  // namespace lucid::kernels
