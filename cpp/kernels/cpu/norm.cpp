#include "kernels/cpu/norm.h"

#include <vector>

#include "kernels/cpu/norm_rows.h"

namespace lucid::kernels {

namespace {

// ---- RMSNorm ------------------------------------------------------------------------------
template <class T, bool HasGain>
struct RmsForwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* gamma, T* y, A* rstd, int64_t r0, int64_t r1, int64_t N,
                               int64_t k, A eps, bool stream) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      T* yr = y + i * N;
      const A ss = reduce_row<A>(k, [xr](int64_t j) { A v = A(xr[j]); return v * v; });
      const A r = A(1) / std::sqrt(ss / A(k) + eps);
      rstd[i] = r;
      write_row(yr, N, stream, [=](int64_t j) { return A(xr[j]) * r * gain<T, HasGain>(gamma, j); });
    }
    stream_fence(stream);
  }
};

// d_x_j = rstd * gy_j - [j < k] * x_j * rstd^3 / k * sum_i gy_i x_i,   gy = grad_out * gamma
// d_gamma_j += grad_out_j * x_j * rstd   (into this chunk's partial row `dg`)
template <class T, bool HasGain>
struct RmsBackwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* gamma, const T* go, const A* rstd, T* dx, A* dg, int64_t r0,
                               int64_t r1, int64_t N, int64_t k, bool stream) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      const T* gr = go + i * N;
      const A r = rstd[i];
      if (dx) {
        T* dr = dx + i * N;
        const A dot = reduce_row<A>(N, [=](int64_t j) { return A(gr[j]) * gain<T, HasGain>(gamma, j) * A(xr[j]); });
        const A c = r * r * r * dot / A(k);
        if (k == N) {
          write_row(dr, N, stream, [=](int64_t j) { return r * (A(gr[j]) * gain<T, HasGain>(gamma, j)) - A(xr[j]) * c; });
        } else {
          for (int64_t j = 0; j < k; ++j) dr[j] = T(r * (A(gr[j]) * gain<T, HasGain>(gamma, j)) - A(xr[j]) * c);
          for (int64_t j = k; j < N; ++j) dr[j] = T(r * (A(gr[j]) * gain<T, HasGain>(gamma, j)));
        }
      }
      if (dg)
        for (int64_t j = 0; j < N; ++j) dg[j] += A(gr[j]) * A(xr[j]) * r;
    }
    stream_fence(stream);
  }
};

// ---- LayerNorm ----------------------------------------------------------------------------
template <class T, bool HasW, bool HasB>
struct LnForwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, int64_t r0,
                               int64_t r1, int64_t N, A eps) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      T* yr = y + i * N;
      // NOTE: two passes (mean, then squared deviations) instead of E[x^2] - E[x]^2, which
      // cancels catastrophically when |mean| >> std; the row is in cache for the second.
      const A m = reduce_row<A>(N, [xr](int64_t j) { return A(xr[j]); }) / A(N);
      const A var = reduce_row<A>(N, [xr, m](int64_t j) { A d = A(xr[j]) - m; return d * d; }) / A(N);
      const A r = A(1) / std::sqrt(var + eps);
      mean[i] = m;
      rstd[i] = r;
      for (int64_t j = 0; j < N; ++j) {
        A v = (A(xr[j]) - m) * r * gain<T, HasW>(w, j);
        if constexpr (HasB) v += A(b[j]);
        yr[j] = T(v);
      }
    }
  }
};

// xhat = (x - mean) * rstd, gy = grad_out * w:
// d_x_j = rstd * (gy_j - mean(gy) - xhat_j * mean(gy * xhat)); d_w_j += grad_out_j xhat_j; d_b_j += grad_out_j
template <class T, bool HasW>
struct LnBackwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* w, const T* go, const A* mean, const A* rstd, T* dx, A* dw,
                               A* db, int64_t r0, int64_t r1, int64_t N) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      const T* gr = go + i * N;
      const A m = mean[i], r = rstd[i];
      if (dx) {
        T* dr = dx + i * N;
        A sg, sgx;
        reduce_row2<A>(N, [=](int64_t j, A& a0, A& a1) {
          const A gy = A(gr[j]) * gain<T, HasW>(w, j);
          a0 += gy;
          a1 += gy * (A(xr[j]) - m) * r;
        }, sg, sgx);
        const A mg = sg / A(N), mgx = sgx / A(N);
        for (int64_t j = 0; j < N; ++j) {
          const A xh = (A(xr[j]) - m) * r;
          dr[j] = T(r * (A(gr[j]) * gain<T, HasW>(w, j) - mg - xh * mgx));
        }
      }
      if (dw)
        for (int64_t j = 0; j < N; ++j) dw[j] += A(gr[j]) * (A(xr[j]) - m) * r;
      if (db)
        for (int64_t j = 0; j < N; ++j) db[j] += A(gr[j]);
    }
  }
};

// ---- GroupRMSNorm -------------------------------------------------------------------------
// Any assignment of channels to groups works. The kernels walk "runs": maximal spans of
// consecutive channels in the same group, each a contiguous block of (run length) * S values
// reduced with the lane-split reduce_row. Contiguous groups (the common layout) are one run
// each, so a row costs what RMSNorm's does; scattered ids degrade to one run per channel.
// Each group's sum adds its runs in channel order (deterministic).
struct Runs {
  std::vector<int64_t> begin;  // run r covers channels [begin[r], begin[r + 1])
  std::vector<int64_t> group;  // its group id
  explicit Runs(const int64_t* grp, int64_t C) {
    for (int64_t c = 0; c < C; ++c) {
      if (c == 0 || grp[c] != grp[c - 1]) {
        begin.push_back(c);
        group.push_back(grp[c]);
      }
    }
    begin.push_back(C);
  }
  int64_t size() const { return int64_t(group.size()); }
};

template <class T, bool HasGain>
struct GroupForwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const Runs* runs, const int64_t* cnt, const T* gamma, T* y, A* rstd,
                               int64_t r0, int64_t r1, int64_t C, int64_t S, int64_t G, A eps, bool stream) {
    const int64_t R = runs->size();
    const int64_t* rb = runs->begin.data();
    const int64_t* rg = runs->group.data();
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * C * S;
      T* yr = y + i * C * S;
      A* rr = rstd + i * G;  // accumulates the sums of squares, then becomes rstd
      std::fill(rr, rr + G, A(0));
      for (int64_t r = 0; r < R; ++r) {
        const T* xb = xr + rb[r] * S;
        rr[rg[r]] += reduce_row<A>((rb[r + 1] - rb[r]) * S, [xb](int64_t j) { A v = A(xb[j]); return v * v; });
      }
      for (int64_t g = 0; g < G; ++g) rr[g] = A(1) / std::sqrt(rr[g] / A(cnt[g] * S) + eps);
      for (int64_t r = 0; r < R; ++r) {
        const A scale = rr[rg[r]] * gain<T, HasGain>(gamma, rg[r]);
        const T* xb = xr + rb[r] * S;
        write_row(yr + rb[r] * S, (rb[r + 1] - rb[r]) * S, stream, [=](int64_t j) { return A(xb[j]) * scale; });
      }
    }
    stream_fence(stream);
  }
};

// Per group g of n_g channels (m_g = n_g S values):
//   d_x = rstd_g gy - x rstd_g^3 / m_g * sum_{values of g} gy x,   gy = grad_out gamma_g
//   d_gamma_g += rstd_g * sum_{values of g} grad_out x
// One reduction per run (sum grad_out x) serves both. `dot` and `sgx` are G-long scratch rows of
// this chunk; `dg` its partial d_gamma row.
template <class T, bool HasGain>
struct GroupBackwardRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const Runs* runs, const int64_t* cnt, const T* gamma, const T* go,
                               const A* rstd, T* dx, A* sgx, A* dg, int64_t r0, int64_t r1, int64_t C, int64_t S,
                               int64_t G) {
    const int64_t R = runs->size();
    const int64_t* rb = runs->begin.data();
    const int64_t* rg = runs->group.data();
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * C * S;
      const T* gr = go + i * C * S;
      const A* rr = rstd + i * G;
      std::fill(sgx, sgx + G, A(0));
      for (int64_t r = 0; r < R; ++r) {
        const T *xb = xr + rb[r] * S, *gb = gr + rb[r] * S;
        sgx[rg[r]] += reduce_row<A>((rb[r + 1] - rb[r]) * S, [=](int64_t j) { return A(gb[j]) * A(xb[j]); });
      }
      if (dg)
        for (int64_t g = 0; g < G; ++g) dg[g] += sgx[g] * rr[g];
      if (!dx) continue;
      T* dr = dx + i * C * S;
      for (int64_t r = 0; r < R; ++r) {
        const int64_t g = rg[r];
        const A k = rr[g] * gain<T, HasGain>(gamma, g);
        const A c = gain<T, HasGain>(gamma, g) * sgx[g] * rr[g] * rr[g] * rr[g] / A(cnt[g] * S);
        const T *xb = xr + rb[r] * S, *gb = gr + rb[r] * S;
        T* db = dr + rb[r] * S;
        const int64_t n = (rb[r + 1] - rb[r]) * S;
        for (int64_t j = 0; j < n; ++j) db[j] = T(k * A(gb[j]) - A(xb[j]) * c);
      }
    }
  }
};

}  // namespace

int64_t norm_chunks(int64_t rows, int64_t row_len) {
  const int64_t work = rows * row_len;
  if (work < kSerialWork) return 1;
  return std::clamp<int64_t>(work / kChunkWork, 1, std::min(rows, kMaxChunks));
}

template <class T>
void rms_norm_forward(const T* x, const T* gamma, T* y, acc_t<T>* rstd, int64_t rows, int64_t N, int64_t k,
                      acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, N);
  const bool stream = use_stream<T>(rows * N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (gamma) run_best<RmsForwardRows<T, true>>(x, gamma, y, rstd, r0, r1, N, k, eps, stream);
    else run_best<RmsForwardRows<T, false>>(x, gamma, y, rstd, r0, r1, N, k, eps, stream);
  });
}

template <class T>
void rms_norm_backward(const T* x, const T* gamma, const T* grad_out, const acc_t<T>* rstd, T* dx,
                       acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows, int64_t N, int64_t k) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* partial = d_gamma ? (P == 1 ? d_gamma : scratch) : nullptr;
  const bool stream = use_stream<T>(rows * N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dg = partial ? partial + c * N : nullptr;
    if (dg) std::fill(dg, dg + N, A(0));
    if (gamma) run_best<RmsBackwardRows<T, true>>(x, gamma, grad_out, rstd, dx, dg, r0, r1, N, k, stream);
    else run_best<RmsBackwardRows<T, false>>(x, gamma, grad_out, rstd, dx, dg, r0, r1, N, k, stream);
  });
  if (d_gamma && P > 1) combine_chunks(scratch, d_gamma, P, N);
}

template <class T>
void layer_norm_forward(const T* x, const T* w, const T* b, T* y, acc_t<T>* mean, acc_t<T>* rstd, int64_t rows,
                        int64_t N, acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (w && b) run_best<LnForwardRows<T, true, true>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else if (w) run_best<LnForwardRows<T, true, false>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else if (b) run_best<LnForwardRows<T, false, true>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else run_best<LnForwardRows<T, false, false>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
  });
}

template <class T>
void layer_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* d_w, acc_t<T>* d_b, acc_t<T>* scratch, int64_t rows, int64_t N) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* pw = d_w ? (P == 1 ? d_w : scratch) : nullptr;
  A* pb = d_b ? (P == 1 ? d_b : scratch + (d_w ? P * N : 0)) : nullptr;
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dw = pw ? pw + c * N : nullptr;
    A* db = pb ? pb + c * N : nullptr;
    if (dw) std::fill(dw, dw + N, A(0));
    if (db) std::fill(db, db + N, A(0));
    if (w) run_best<LnBackwardRows<T, true>>(x, w, grad_out, mean, rstd, dx, dw, db, r0, r1, N);
    else run_best<LnBackwardRows<T, false>>(x, w, grad_out, mean, rstd, dx, dw, db, r0, r1, N);
  });
  if (P > 1) {
    if (d_w) combine_chunks(pw, d_w, P, N);
    if (d_b) combine_chunks(pb, d_b, P, N);
  }
}

template <class T>
void group_rms_norm_forward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma, T* y,
                            acc_t<T>* rstd, int64_t rows, int64_t C, int64_t S, int64_t G, acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, C * S);
  const Runs runs(groups, C);
  const bool stream = use_stream<T>(rows * C * S);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (gamma) run_best<GroupForwardRows<T, true>>(x, &runs, counts, gamma, y, rstd, r0, r1, C, S, G, eps, stream);
    else run_best<GroupForwardRows<T, false>>(x, &runs, counts, gamma, y, rstd, r0, r1, C, S, G, eps, stream);
  });
}

template <class T>
void group_rms_norm_backward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                             const T* grad_out, const acc_t<T>* rstd, T* dx, acc_t<T>* d_gamma, acc_t<T>* scratch,
                             int64_t rows, int64_t C, int64_t S, int64_t G) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, C * S);
  const Runs runs(groups, C);
  // scratch layout: P sum(grad_out x) rows of G, then P partial d_gamma rows of G.
  A* partial = scratch + P * G;
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* sgx = scratch + c * G;
    A* dg = d_gamma ? partial + c * G : nullptr;
    if (dg) std::fill(dg, dg + G, A(0));
    if (gamma) run_best<GroupBackwardRows<T, true>>(x, &runs, counts, gamma, grad_out, rstd, dx, sgx, dg, r0, r1, C, S, G);
    else run_best<GroupBackwardRows<T, false>>(x, &runs, counts, gamma, grad_out, rstd, dx, sgx, dg, r0, r1, C, S, G);
  });
  if (d_gamma) combine_chunks(partial, d_gamma, P, G);
}

#define LUCID_NORM_INSTANTIATE(T)                                                                             \
  template void rms_norm_forward<T>(const T*, const T*, T*, acc_t<T>*, int64_t, int64_t, int64_t, acc_t<T>); \
  template void rms_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, T*, acc_t<T>*, acc_t<T>*, \
                                     int64_t, int64_t, int64_t);                                              \
  template void layer_norm_forward<T>(const T*, const T*, const T*, T*, acc_t<T>*, acc_t<T>*, int64_t,      \
                                      int64_t, acc_t<T>);                                                     \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*, T*,   \
                                       acc_t<T>*, acc_t<T>*, acc_t<T>*, int64_t, int64_t);                    \
  template void group_rms_norm_forward<T>(const T*, const int64_t*, const int64_t*, const T*, T*, acc_t<T>*, \
                                          int64_t, int64_t, int64_t, int64_t, acc_t<T>);                             \
  template void group_rms_norm_backward<T>(const T*, const int64_t*, const int64_t*, const T*, const T*,     \
                                           const acc_t<T>*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t, int64_t);

LUCID_NORM_INSTANTIATE(Half)
LUCID_NORM_INSTANTIATE(BFloat16)
LUCID_NORM_INSTANTIATE(float)
LUCID_NORM_INSTANTIATE(double)

}  // namespace lucid::kernels
