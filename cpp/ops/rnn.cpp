#include "ops/rnn.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "autograd/engine.h"
#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/rnn.h"
#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/join.h"
#include "ops/matmul.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& RnnBackward::schema_v1 =
    register_schema({.name = "rnn", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

namespace {

int64_t gate_count(RnnMode m) { return m == RnnMode::Lstm ? 4 : m == RnnMode::Gru ? 3 : 1; }

// C (m x n, ldc) = op(A) op(B) + beta C; empty products leave C (or zero it when beta == 0).
template <class T>
void rnn_gemm(int64_t m, int64_t n, int64_t k, const T* a, kernels::MatLayout la, const T* b,
              kernels::MatLayout lb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0))
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  kernels::gemm<T>(m, n, k, a, la, b, lb, beta, c, ldc);
}

// The per-step products (M = batch rows), in column blocks of op(B) when that pays:
// - OpenBLAS with its own threads: blocks small enough that it runs each on the calling thread.
//   Waking its pool for a product this size costs more than the product, and on a shared machine
//   every step would wait for a descheduled worker (measured: 5x slower training steps at 2
//   threads under load). OpenBLAS goes serial below 65536 * 4 multiply-adds.
// - Single-threaded OpenBLAS (pylucid's default): one call, except float32 h W^T with at most 32
//   rows, cut into blocks of at most 1024 outputs. OpenBLAS 0.3.34 (the pinned version) sends those
//   to its small-matrix kernel, which skips packing W: 16x512x128 takes 23 us instead of 36, and
//   8..32 rows gain 1.2-2.2x. Wider blocks or the other layouts measured no gain.
template <class T>
void step_gemm(int64_t m, int64_t n, int64_t k, const T* a, kernels::MatLayout la, const T* b, kernels::MatLayout lb,
               T beta, T* c, int64_t ldc) {
  int64_t nc = n;  // columns of op(B) per call
  if (kernels::blas_num_threads() > 1) {
    constexpr int64_t kSerialMacs = (int64_t(1) << 18) - 1;
    nc = std::max<int64_t>(1, kSerialMacs / std::max<int64_t>(1, m * k));
  } else if (std::is_same_v<T, float> && lb.trans && !la.trans && m <= 32) {
    nc = std::max<int64_t>(8, 1024 / std::max<int64_t>(1, m));
  }
  for (int64_t j0 = 0; j0 < n; j0 += nc) {
    const int64_t w = std::min(nc, n - j0);
    // column block j0 of op(B): rows of a transposed B, columns of a plain one
    const T* bj = lb.trans ? b + j0 * lb.ld : b + j0;
    rnn_gemm<T>(m, w, k, a, la, bj, lb, beta, c + j0, ldc);
  }
}

// out[j] (+)= sum over rows of a (rows x n).
template <class T>
void col_sum(const T* a, int64_t rows, int64_t n, T* out) {
  std::fill(out, out + n, T(0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) out[j] += a[r * n + j];
}

// The kernels run in float32 or float64 only (half inputs are widened to float32).
#define LUCID_RNN_DISPATCH(wd, ...)  \
  if ((wd) == DType::Float64) {      \
    using scalar_t = double;         \
    __VA_ARGS__();                   \
  } else {                           \
    using scalar_t = float;          \
    __VA_ARGS__();                   \
  }

TensorImplPtr work(const TensorImplPtr& t, DType wd) { return t ? contiguous_raw(cast_raw(t, wd)) : nullptr; }

}  // namespace

RnnMode rnn_mode(const std::string& mode) {
  if (mode == "RNN_TANH") return RnnMode::Tanh;
  if (mode == "RNN_RELU") return RnnMode::Relu;
  if (mode == "LSTM") return RnnMode::Lstm;
  if (mode == "GRU") return RnnMode::Gru;
  throw LucidError(str("rnn: unknown mode '", mode, "', expected RNN_TANH, RNN_RELU, LSTM or GRU"));
}

TensorImplPtr rnn_layer(const std::string& mode_name, const TensorImplPtr& x, const TensorImplPtr& h0,
                        const TensorImplPtr& c0, const TensorImplPtr& w_ih, const TensorImplPtr& w_hh,
                        const TensorImplPtr& b_ih, const TensorImplPtr& b_hh, const TensorImplPtr& w_hr,
                        bool reverse, const std::string& layer_name) {
  const char* op = layer_name.c_str();
  const RnnMode mode = rnn_mode(mode_name);
  const bool lstm = mode == RnnMode::Lstm;
  LUCID_CHECK_DTYPE(x && h0 && w_ih && w_hh, op, ": input, hx, weight_ih and weight_hh are required");
  for (auto [name, t] : {std::pair{"input", &x}, std::pair{"hx", &h0}, std::pair{"cx", &c0},
                         std::pair{"weight_ih", &w_ih}, std::pair{"weight_hh", &w_hh}, std::pair{"bias_ih", &b_ih},
                         std::pair{"bias_hh", &b_hh}, std::pair{"weight_hr", &w_hr}})
    if (*t)
      LUCID_CHECK_DTYPE(is_floating((*t)->dtype), op, ": expected a floating ", name, ", got ",
                        dtype_name((*t)->dtype));
  LUCID_CHECK_SHAPE(x->ndim() == 3, op, ": expected a 3-D (time, batch, feature) input, got ", shape_str(x->shape));
  LUCID_CHECK_SHAPE(w_ih->ndim() == 2 && w_hh->ndim() == 2, op, ": weights must be 2-D, got weight_ih ",
                    shape_str(w_ih->shape), " and weight_hh ", shape_str(w_hh->shape));
  const int64_t G = gate_count(mode), T = x->shape[0], B = x->shape[1], I = x->shape[2];
  LUCID_CHECK_SHAPE(w_ih->shape[0] % G == 0 && w_ih->shape[0] > 0, op, ": weight_ih shape ",
                    shape_str(w_ih->shape), " is not (", G, " * hidden_size, input_size)");
  const int64_t H = w_ih->shape[0] / G;
  const int64_t Hout = w_hr ? w_hr->shape[0] : H;
  LUCID_CHECK_SHAPE(w_ih->shape[1] == I, op, ": input.size(-1) must be equal to input_size. Expected ",
                    w_ih->shape[1], ", got ", I, " (input shape ", shape_str(x->shape), ")");
  LUCID_CHECK_SHAPE(w_hh->shape == (Shape{G * H, Hout}), op, ": weight_hh shape ", shape_str(w_hh->shape),
                    " does not match [", G * H, ", ", Hout, "]");
  if (w_hr)
    LUCID_CHECK_SHAPE(lstm && w_hr->shape == (Shape{Hout, H}) && Hout > 0, op, ": weight_hr shape ",
                      shape_str(w_hr->shape), " is not (proj_size, hidden_size) of an LSTM with hidden_size ", H);
  for (auto [name, t] : {std::pair{"bias_ih", &b_ih}, std::pair{"bias_hh", &b_hh}})
    if (*t)
      LUCID_CHECK_SHAPE((*t)->shape == Shape{G * H}, op, ": ", name, " shape ", shape_str((*t)->shape),
                        " does not match [", G * H, "]");
  LUCID_CHECK_SHAPE(h0->shape == (Shape{B, Hout}), op, ": expected hidden state of size [", B, ", ", Hout,
                    "] per layer and direction, got ", shape_str(h0->shape));
  if (lstm) {
    LUCID_CHECK_SHAPE(c0 != nullptr, op, ": the LSTM needs a cell state");
    LUCID_CHECK_SHAPE(c0->shape == (Shape{B, H}), op, ": expected cell state of size [", B, ", ", H,
                      "] per layer and direction, got ", shape_str(c0->shape));
  }
  LUCID_CHECK_SHAPE(T >= 1, op, ": expected a sequence of length >= 1, got input ", shape_str(x->shape));

  DType in = x->dtype;
  for (auto* t : {&h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh, &w_hr})
    if (*t) in = promote_types(in, (*t)->dtype);
  const DType cd = compute_dtype(RnnBackward::schema_v1, in);
  const DType wd = acc_dtype(cd);
  auto xw = work(x, wd), h0w = work(h0, wd), c0w = work(c0, wd), wih = work(w_ih, wd), whh = work(w_hh, wd);
  auto bih = work(b_ih, wd), bhh = work(b_hh, wd), whr = work(w_hr, wd);

  const int64_t GH = G * H, TB = T * B, nout = TB * Hout;
  auto packed = empty({nout + (lstm ? B * H : 0)}, wd);
  auto gates = empty({T, B, GH}, wd);
  auto cells = lstm ? empty({T, B, H}, wd) : nullptr;
  auto hpre = w_hr ? empty({T, B, H}, wd) : nullptr;
  auto hn = mode == RnnMode::Gru ? empty({T, B, H}, wd) : nullptr;
  LUCID_RNN_DISPATCH(wd, [&] {
    using S = scalar_t;
    {
      S* g = gates->data<S>();
      S* out = packed->data<S>();
      // the whole sequence's input projection, with the biases that add outside the gates
      rnn_gemm<S>(TB, GH, I, xw->data<S>(), {false, I}, wih->data<S>(), {true, I}, S(0), g, GH);
      std::vector<S> bias(size_t(GH), S(0));
      if (bih)
        for (int64_t j = 0; j < GH; ++j) bias[size_t(j)] += bih->data<S>()[j];
      if (bhh && mode != RnnMode::Gru)
        for (int64_t j = 0; j < GH; ++j) bias[size_t(j)] += bhh->data<S>()[j];
      for (int64_t r = 0; r < TB; ++r)
        for (int64_t j = 0; j < GH; ++j) g[r * GH + j] += bias[size_t(j)];
      std::vector<S> hw(mode == RnnMode::Gru ? size_t(B * GH) : 0);
      const S* h_prev = h0w->data<S>();
      const S* c_prev = lstm ? c0w->data<S>() : nullptr;
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = reverse ? T - 1 - s : s;
        S* gt = g + t * B * GH;
        S* ht = out + t * B * Hout;
        if (mode == RnnMode::Gru) {
          S* hwp = hw.data();
          for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < GH; ++j) hwp[b * GH + j] = bhh ? bhh->data<S>()[j] : S(0);
          step_gemm<S>(B, GH, Hout, h_prev, {false, Hout}, whh->data<S>(), {true, Hout}, S(1), hwp, GH);
          kernels::gru_step_forward<S>(gt, hwp, h_prev, hn->data<S>() + t * B * H, ht, B, H);
        } else {
          step_gemm<S>(B, GH, Hout, h_prev, {false, Hout}, whh->data<S>(), {true, Hout}, S(1), gt, GH);
          if (lstm) {
            S* ct = cells->data<S>() + t * B * H;
            S* hdst = hpre ? hpre->data<S>() + t * B * H : ht;
            kernels::lstm_step_forward<S>(gt, c_prev, ct, hdst, B, H, H);
            if (hpre) step_gemm<S>(B, Hout, H, hdst, {false, H}, whr->data<S>(), {true, H}, S(0), ht, Hout);
            c_prev = ct;
          } else {
            kernels::rnn_step_forward<S>(gt, ht, B, H, mode == RnnMode::Relu);
          }
        }
        h_prev = ht;
      }
      if (lstm) std::memcpy(out + nout, c_prev, size_t(B * H) * sizeof(S));
    }
  });
  auto y = cast_raw(packed, cd);
  if (any_requires_grad({&x, &h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh, &w_hr})) {
    auto node = std::make_shared<RnnBackward>();
    node->set_inputs({x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr});
    node->save(0, x), node->save(1, h0), node->save(2, c0), node->save(3, w_ih), node->save(4, w_hh);
    node->save(5, b_ih), node->save(6, b_hh), node->save(7, w_hr);  // the biases for double backward
    node->mode_ = mode, node->reverse_ = reverse;
    node->T_ = T, node->B_ = B, node->I_ = I, node->H_ = H, node->Hout_ = Hout;
    node->compute_dtype_ = cd, node->work_dtype_ = wd;
    // the output itself when no cast happened: a view without grad_fn (no cycle), version-checked
    node->out_ = y == packed ? detach(packed) : packed;
    node->out_version_ = node->out_->version();
    node->bias_dtype_[0] = b_ih ? b_ih->dtype : cd, node->bias_dtype_[1] = b_hh ? b_hh->dtype : cd;
    node->gates_ = gates, node->cells_ = cells, node->hpre_ = hpre, node->hn_ = hn;
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> RnnBackward::apply(const TensorImplPtr& grad_out) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, "RnnBackward: grad_out is None");
  LUCID_CHECK_SHAPE(grad_out->shape == out_->shape, "RnnBackward: grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(out_->shape));
  if (out_->version() != out_version_) throw LucidError(modified_saved_message(*out_, this, out_version_));
  const DType wd = work_dtype_;
  const RnnMode mode = mode_;
  const bool lstm = mode == RnnMode::Lstm;
  const int64_t T = T_, B = B_, I = I_, H = H_, Hout = Hout_, G = gate_count(mode), GH = G * H, TB = T * B;
  const int64_t nout = TB * Hout;
  auto xw = work(saved_[0], wd), h0w = work(saved_[1], wd), c0w = work(saved_[2], wd);
  auto wih = work(saved_[3], wd), whh = work(saved_[4], wd), whr = work(saved_[7], wd);
  auto go = work(grad_out, wd);
  auto dgx = empty({T, B, GH}, wd);
  auto dgh = mode == RnnMode::Gru ? empty({T, B, GH}, wd) : dgx;
  auto hprev = empty({T, B, Hout}, wd);
  auto dout = hpre_ ? empty({T, B, Hout}, wd) : nullptr;  // d(h) per step, for d(weight_hr)
  auto dh0 = empty({B, Hout}, wd);
  auto dc0 = lstm ? empty({B, H}, wd) : nullptr;
  TensorImplPtr dx, dwih, dwhh, dbih, dbhh, dwhr;
  LUCID_RNN_DISPATCH(wd, [&] {
    using S = scalar_t;
    {
      const S* out = out_->data<S>();
      const S* gout = go->data<S>();
      const S* gates = gates_->data<S>();
      S* dg = dgx->data<S>();
      S* dh = dgh->data<S>();
      std::vector<S> dh_rec(size_t(B * Hout), S(0)), dh_t(size_t(B * Hout)), dhp(lstm ? size_t(B * H) : 0);
      S* dc = lstm ? dc0->data<S>() : nullptr;
      if (lstm) std::memcpy(dc, gout + nout, size_t(B * H) * sizeof(S));
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = reverse_ ? T - 1 - s : s;
        const int64_t tp = reverse_ ? t + 1 : t - 1;  // the step processed before t
        const bool first = s == 0;
        const S* h_prev = first ? h0w->data<S>() : out + tp * B * Hout;
        std::memcpy(hprev->data<S>() + t * B * Hout, h_prev, size_t(B * Hout) * sizeof(S));
        const S* go_t = gout + t * B * Hout;
        for (int64_t j = 0; j < B * Hout; ++j) dh_t[size_t(j)] = go_t[j] + dh_rec[size_t(j)];
        S* dgt = dg + t * B * GH;
        S* dht = dh + t * B * GH;
        if (lstm) {
          const S* dhpre = dh_t.data();
          if (hpre_) {
            std::memcpy(dout->data<S>() + t * B * Hout, dh_t.data(), size_t(B * Hout) * sizeof(S));
            step_gemm<S>(B, H, Hout, dh_t.data(), {false, Hout}, whr->data<S>(), {false, H}, S(0),
                    dhp.data(), H);
            dhpre = dhp.data();
          }
          const S* c_prev = first ? c0w->data<S>() : cells_->data<S>() + tp * B * H;
          kernels::lstm_step_backward<S>(gates + t * B * GH, c_prev, cells_->data<S>() + t * B * H, dhpre, dc, dgt,
                                         B, H);
          step_gemm<S>(B, Hout, GH, dgt, {false, GH}, whh->data<S>(), {false, Hout}, S(0), dh_rec.data(), Hout);
        } else if (mode == RnnMode::Gru) {
          kernels::gru_step_backward<S>(gates + t * B * GH, hn_->data<S>() + t * B * H, h_prev, dh_t.data(), dgt,
                                        dht, dh_rec.data(), B, H);
          step_gemm<S>(B, Hout, GH, dht, {false, GH}, whh->data<S>(), {false, Hout}, S(1), dh_rec.data(), Hout);
        } else {
          kernels::rnn_step_backward<S>(out + t * B * Hout, dh_t.data(), dgt, B, H, mode == RnnMode::Relu);
          step_gemm<S>(B, Hout, GH, dgt, {false, GH}, whh->data<S>(), {false, Hout}, S(0), dh_rec.data(), Hout);
        }
      }
      std::memcpy(dh0->data<S>(), dh_rec.data(), size_t(B * Hout) * sizeof(S));
      if (needs_input_grad(0)) {
        dx = empty({T, B, I}, wd);
        rnn_gemm<S>(TB, I, GH, dg, {false, GH}, wih->data<S>(), {false, I}, S(0), dx->data<S>(), I);
      }
      if (needs_input_grad(3)) {
        dwih = empty({GH, I}, wd);
        rnn_gemm<S>(GH, I, TB, dg, {true, GH}, xw->data<S>(), {false, I}, S(0), dwih->data<S>(), I);
      }
      if (needs_input_grad(4)) {
        dwhh = empty({GH, Hout}, wd);
        rnn_gemm<S>(GH, Hout, TB, dh, {true, GH}, hprev->data<S>(), {false, Hout}, S(0), dwhh->data<S>(), Hout);
      }
      if (needs_input_grad(5)) {
        dbih = empty({GH}, wd);
        col_sum(dg, TB, GH, dbih->data<S>());
      }
      if (needs_input_grad(6)) {
        dbhh = empty({GH}, wd);
        if (dbih && dh == dg)  // both biases add to the same pre-activations (all but the GRU)
          std::memcpy(dbhh->data<S>(), dbih->data<S>(), size_t(GH) * sizeof(S));
        else
          col_sum(dh, TB, GH, dbhh->data<S>());
      }
      if (hpre_ && needs_input_grad(7)) {
        dwhr = empty({Hout, H}, wd);
        rnn_gemm<S>(Hout, H, TB, dout->data<S>(), {true, Hout}, hpre_->data<S>(), {false, H}, S(0), dwhr->data<S>(), H);
      }
    }
  });
  auto back = [&](const TensorImplPtr& g, size_t slot, DType dtype) -> TensorImplPtr {
    return g && needs_input_grad(slot) ? cast_raw(g, dtype) : nullptr;
  };
  auto dt = [](const TensorImplPtr& t) { return t ? t->dtype : DType::Float32; };
  return {back(dx, 0, dt(saved_[0])),  back(dh0, 1, dt(saved_[1])),  back(dc0, 2, dt(saved_[2])),
          back(dwih, 3, dt(saved_[3])), back(dwhh, 4, dt(saved_[4])), back(dbih, 5, bias_dtype_[0]),
          back(dbhh, 6, bias_dtype_[1]), back(dwhr, 7, dt(saved_[7]))};
}

}  // namespace lucid

namespace lucid {

namespace {

// The layer's packed output recomputed with differentiable ops, one small graph per step (the
// same maths as the fused kernels: gate order i, f, g, o for the LSTM and r, z, n for the GRU,
// whose b_hn stays inside r * (W_hn h + b_hn)).
TensorImplPtr rnn_composite(RnnMode mode, bool reverse, DType wd, const std::array<TensorImplPtr, 8>& in) {
  auto w = [&](size_t i) { return in[i] ? to(in[i], wd, false) : nullptr; };
  auto x = w(0), h = w(1), c = w(2), w_ih = w(3), w_hh = w(4), b_ih = w(5), b_hh = w(6), w_hr = w(7);
  const int64_t T = x->shape[0], G = gate_count(mode), H = w_ih->shape[0] / G;
  const bool gru = mode == RnnMode::Gru;
  auto xp = linear(x, w_ih, b_ih);  // (T, B, G H)
  if (b_hh && !gru) xp = add(xp, b_hh);
  auto gate = [&](const TensorImplPtr& g, int64_t k) { return narrow(g, 1, k * H, H); };
  std::vector<TensorImplPtr> outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    auto gx = select(xp, 0, t);
    if (mode == RnnMode::Lstm) {
      auto g = add(gx, linear(h, w_hh, nullptr));
      c = add(mul(sigmoid(gate(g, 1)), c), mul(sigmoid(gate(g, 0)), tanh(gate(g, 2))));
      h = mul(sigmoid(gate(g, 3)), tanh(c));
      if (w_hr) h = linear(h, w_hr, nullptr);
    } else if (gru) {
      auto gh = linear(h, w_hh, b_hh);
      auto r = sigmoid(add(gate(gx, 0), gate(gh, 0)));
      auto z = sigmoid(add(gate(gx, 1), gate(gh, 1)));
      auto n = tanh(add(gate(gx, 2), mul(r, gate(gh, 2))));
      h = add(n, mul(z, sub(h, n)));  // (1 - z) n + z h
    } else {
      auto a = add(gx, linear(h, w_hh, nullptr));
      h = mode == RnnMode::Relu ? relu(a) : tanh(a);
    }
    outs[size_t(t)] = h;
  }
  std::vector<TensorImplPtr> parts = {reshape(stack(outs, 0), {-1})};
  if (mode == RnnMode::Lstm) parts.push_back(reshape(c, {-1}));
  return parts.size() == 1 ? parts[0] : cat(parts, 0);
}

}  // namespace

// NOTE [RNN double backward]: the saved inputs enter the recomputation as views whose nodes lead
// nowhere while the inner backward runs (so it cannot walk into, or free, the outer graph), and
// are then wired to this node's input edges: the returned gradients are graphs over the
// recomputation, and differentiating them again reaches the original inputs.
std::vector<TensorImplPtr> RnnBackward::apply_graph(const TensorImplPtr& grad_out) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, "RnnBackward: grad_out is None");
  if (out_->version() != out_version_) throw LucidError(modified_saved_message(*out_, this, out_version_));
  std::array<TensorImplPtr, 8> in;
  std::vector<TensorImplPtr> wrt;
  std::vector<size_t> wrt_slot;
  std::vector<std::vector<Edge>> stashed;
  for (size_t i = 0; i < 8; ++i) {
    const auto& s = saved_[i];
    if (!s) continue;
    if (!needs_input_grad(i)) {
      in[i] = detach(s);  // detached: no path into the outer graph
      continue;
    }
    in[i] = saved_input_graph(s, next_edges[i], s->shape, s->dtype);
    stashed.push_back(std::move(in[i]->grad_fn->next_edges));
    in[i]->grad_fn->next_edges.clear();
    wrt.push_back(in[i]), wrt_slot.push_back(i);
  }
  auto y = to(rnn_composite(mode_, reverse_, work_dtype_, in), compute_dtype_, false);
  std::vector<TensorImplPtr> found;
  if (!wrt.empty() && y->requires_grad)
    found = Engine::backward({y}, {grad_out}, /*retain_graph=*/true, wrt, /*create_graph=*/true);
  for (size_t j = 0; j < wrt.size(); ++j) wrt[j]->grad_fn->next_edges = std::move(stashed[j]);
  std::vector<TensorImplPtr> grads(8);
  for (size_t j = 0; j < found.size(); ++j) grads[wrt_slot[j]] = found[j];
  return grads;
}

}  // namespace lucid
