// Fused per-step gate kernels of the recurrent layers (no autograd, no allocation). B rows of
// H hidden units each; gate blocks are laid out as PyTorch's weights: LSTM (i, f, g, o), GRU
// (r, z, n). `gates` holds the pre-activations on entry to a forward step and the activations
// on exit (what the backward step reads).
//   LSTM  c = f c_prev + i g,  h = o tanh(c)
//   GRU   r, z = sigmoid(.),  n = tanh(x_n + r hn)  (hn = W_hn h_prev + b_hn),  h = (1 - z) n + z h_prev
//   RNN   h = tanh(a) or relu(a)
// Backward steps turn d(h) (and d(c) for the LSTM) into the gradient of the pre-activations.
#pragma once
#include <cstdint>

namespace lucid::kernels {

template <class T>
void lstm_step_forward(T* gates, const T* c_prev, T* c, T* h, int64_t B, int64_t H, int64_t ldh);
// dc: in d(c) from later steps, out d(c_prev). dgates: (B, 4H). dh: (B, H) gradient of h.
template <class T>
void lstm_step_backward(const T* gates, const T* c_prev, const T* c, const T* dh, T* dc, T* dgates, int64_t B,
                        int64_t H);

// hw: (B, 3H) = h_prev W_hh^T + b_hh; hn_out: its n block (saved); h_prev with leading dim ldh.
template <class T>
void gru_step_forward(T* gates, const T* hw, const T* h_prev, T* hn_out, T* h, int64_t B, int64_t H);
// dh: gradient of h; writes dgx (B, 3H: input-side pre-activation grads), dgh (B, 3H: hidden
// side, whose n block is d(hn)) and dh_prev = dh z (the direct path; the caller adds dgh W_hh).
template <class T>
void gru_step_backward(const T* gates, const T* hn, const T* h_prev, const T* dh, T* dgx, T* dgh, T* dh_prev,
                       int64_t B, int64_t H);

// In place: a -> act(a) (tanh or relu) written to h (leading dim ldh).
template <class T>
void rnn_step_forward(const T* a, T* h, int64_t B, int64_t H, bool relu);
template <class T>
void rnn_step_backward(const T* h, const T* dh, T* da, int64_t B, int64_t H, bool relu);

}  // namespace lucid::kernels
