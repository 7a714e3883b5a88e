#include "ops/conv.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/autocast.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/matmul.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& ConvolutionBackward::schema_v1 = register_schema(
    {.name = "convolution", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

namespace {

using kernels::ConvGeom;
using kernels::MatLayout;

// The 4-d problem behind one call. `geom` is the im2col geometry: for a convolution the image
// is x and the grid is y; for a transposed one the image is y and the grid is x.
struct Plan {
  int64_t N = 0, Cx = 0, Cy = 0, G = 1;
  ConvGeom geom;
  Shape y_shape;
};

template <class T>
DType dtype_of() {
  return std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
}

bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

std::string spatial_str(int dims, int64_t h, int64_t w) {
  return dims == 1 ? str(w) : str(h, " x ", w);
}

Plan make_plan(const TensorImplPtr& x, const TensorImplPtr& w, const TensorImplPtr& b, const ConvSpec& s,
               const char* op) {
  const int d = s.dims;
  LUCID_CHECK(d == 1 || d == 2, op, ": only 1-d and 2-d convolutions are supported, got ", d, " spatial dims");
  LUCID_CHECK_SHAPE(x->ndim() == d + 1 || x->ndim() == d + 2, op, ": expected ", d + 1, "-D (unbatched) or ", d + 2,
                    "-D (batched) input, but got input of shape ", shape_str(x->shape));
  LUCID_CHECK_SHAPE(w->ndim() == d + 2, op, ": expected a ", d + 2, "-D weight, but got weight of shape ",
                    shape_str(w->shape));
  LUCID_CHECK(s.groups >= 1, op, ": groups must be a positive integer, got ", s.groups);
  for (int i = 0; i < 2; ++i) {
    LUCID_CHECK(s.stride[i] >= 1, op, ": stride must be positive, got ", s.stride[i]);
    LUCID_CHECK(s.dilation[i] >= 1, op, ": dilation must be positive, got ", s.dilation[i]);
    LUCID_CHECK(s.pad_lo[i] >= 0 && s.pad_hi[i] >= 0, op, ": padding must be non-negative, got ",
                std::min(s.pad_lo[i], s.pad_hi[i]));
    LUCID_CHECK(s.output_padding[i] >= 0, op, ": output_padding must be non-negative, got ", s.output_padding[i]);
    if (s.transposed)
      LUCID_CHECK(s.output_padding[i] < std::max(s.stride[i], s.dilation[i]), op, ": output padding (",
                  s.output_padding[i], ") must be smaller than either stride (", s.stride[i], ") or dilation (",
                  s.dilation[i], ")");
  }
  const bool batched = x->ndim() == d + 2;
  const int64_t lead = batched ? 1 : 0;
  Plan p;
  p.G = s.groups;
  p.N = batched ? x->shape[0] : 1;
  const int64_t Cin = x->shape[lead];
  const int64_t H = d == 2 ? x->shape[lead + 1] : 1, W = x->shape[lead + d];
  const int64_t kH = d == 2 ? w->shape[2] : 1, kW = w->shape[1 + d];
  for (int64_t i = 2; i < w->ndim(); ++i)
    LUCID_CHECK_SHAPE(w->shape[i] > 0, op, ": kernel size must be positive, got weight of shape ",
                      shape_str(w->shape));
  int64_t Cout;
  if (!s.transposed) {
    Cout = w->shape[0];
    LUCID_CHECK_SHAPE(Cout % p.G == 0, op, ": out_channels (", Cout, ") must be divisible by groups (", p.G, ")");
    LUCID_CHECK_SHAPE(Cin == w->shape[1] * p.G, op, ": given groups=", p.G, ", weight of shape ",
                      shape_str(w->shape), ", expected input of shape ", shape_str(x->shape), " to have ",
                      w->shape[1] * p.G, " channels, but got ", Cin, " channels instead");
  } else {
    LUCID_CHECK_SHAPE(Cin == w->shape[0], op, ": given transposed=True, weight of shape ", shape_str(w->shape),
                      ", expected input of shape ", shape_str(x->shape), " to have ", w->shape[0],
                      " channels, but got ", Cin, " channels instead");
    LUCID_CHECK_SHAPE(Cin % p.G == 0, op, ": in_channels (", Cin, ") must be divisible by groups (", p.G, ")");
    Cout = w->shape[1] * p.G;
  }
  if (b)
    LUCID_CHECK_SHAPE(b->ndim() == 1 && b->shape[0] == Cout, op, ": expected bias of shape [", Cout,
                      "], got ", shape_str(b->shape));
  ConvGeom& g = p.geom;
  g.kH = kH, g.kW = kW;
  g.sH = s.stride[0], g.sW = s.stride[1];
  g.pH = s.pad_lo[0], g.pW = s.pad_lo[1];
  g.dH = s.dilation[0], g.dW = s.dilation[1];
  const int64_t ekH = g.dH * (kH - 1) + 1, ekW = g.dW * (kW - 1) + 1;
  int64_t OH, OW;
  if (!s.transposed) {
    const int64_t pH = H + s.pad_lo[0] + s.pad_hi[0], pW = W + s.pad_lo[1] + s.pad_hi[1];
    LUCID_CHECK_SHAPE(pH >= ekH && pW >= ekW, op, ": calculated padded input size per channel: (",
                      spatial_str(d, pH, pW), "); kernel size: (", spatial_str(d, ekH, ekW),
                      "); kernel size can't be greater than actual input size");
    OH = (pH - ekH) / g.sH + 1, OW = (pW - ekW) / g.sW + 1;
    g.C = Cin, g.H = H, g.W = W, g.OH = OH, g.OW = OW;
  } else {
    OH = (H - 1) * g.sH - s.pad_lo[0] - s.pad_hi[0] + ekH + s.output_padding[0];
    OW = (W - 1) * g.sW - s.pad_lo[1] - s.pad_hi[1] + ekW + s.output_padding[1];
    // an empty batch may have an empty output, as PyTorch (a negative size is still an error)
    LUCID_CHECK_SHAPE((OH > 0 && OW > 0) || (p.N == 0 && OH >= 0 && OW >= 0), op, ": given input of shape ",
                      shape_str(x->shape),
                      ", the calculated output size (", spatial_str(d, OH, OW), ") is too small");
    g.C = Cout, g.H = OH, g.W = OW, g.OH = H, g.OW = W;
  }
  p.Cx = Cin, p.Cy = Cout;
  if (batched) p.y_shape.push_back(p.N);
  p.y_shape.push_back(Cout);
  if (d == 2) p.y_shape.push_back(OH);
  p.y_shape.push_back(OW);
  return p;
}

// Batch items per GEMM: enough that the product is at least kMinCols wide, few enough to keep
// the column matrix (rows x items x grid) near 64 KiB of float, inside the L2 cache: on LeNet-sized
// layers the im2col traffic costs more than the GEMM, and a cache-resident column matrix halves
// the step (a 16 MiB budget made one wide GEMM but streamed every column through memory).
int64_t chunk_of(int64_t N, int64_t rows, int64_t L) {
  constexpr int64_t kColBudget = int64_t(1) << 14, kMinCols = 64;
  const int64_t per = std::max<int64_t>(1, rows * L);
  const int64_t nb = std::max(kColBudget / per, (kMinCols + L - 1) / std::max<int64_t>(L, 1));
  return std::clamp<int64_t>(nb, 1, std::max<int64_t>(N, 1));
}

// C (m x n) = op(A) @ op(B) (+ C when accumulate); a zero-sized k just clears (or keeps) C.
template <class T>
void gemm0(int64_t m, int64_t n, int64_t k, const T* a, MatLayout la, const T* b, MatLayout lb, bool accumulate,
           T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  kernels::gemm<T>(m, n, k, a, la, b, lb, accumulate ? T(1) : T(0), c, ldc);
}

// out (N, R, L) = per group, W_g (R/G, K) @ im2col(img)_g, plus bias. img has geom.C channels.
template <class T>
void im2col_gemm(const T* img, const ConvGeom& geom, int64_t N, int64_t G, const T* w, int64_t R, const T* bias,
                 T* out) {
  const int64_t L = geom.OH * geom.OW, Cg = geom.C / G, Rg = R / G, K = Cg * geom.kH * geom.kW;
  const int64_t nb = chunk_of(N, K, L);
  TensorImplPtr col = empty({K * nb * L}, dtype_of<T>());
  TensorImplPtr ocn = empty({R * nb * L}, dtype_of<T>());
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t m = std::min(nb, N - n0), cols = m * L;
    for (int64_t g = 0; g < G; ++g) {
      kernels::im2col<T>(img, geom, n0, m, g * Cg, Cg, col->data<T>());
      gemm0<T>(Rg, cols, K, w + g * Rg * K, {false, std::max<int64_t>(K, 1)}, col->data<T>(),
               {false, std::max<int64_t>(cols, 1)}, false, ocn->data<T>() + g * Rg * cols, cols);
    }
    kernels::cn_to_nc<T>(ocn->data<T>(), bias, R, L, n0, m, out);
  }
}

// img (N, geom.C, H, W) = per group col2im(W_g^T @ src_g), src (N, R, L); img is overwritten.
// With dw set, also dw_g = src_g @ im2col(x_img)_g^T (x_img has geom.C channels, like img).
template <class T>
void gemm_col2im(const T* src, const ConvGeom& geom, int64_t N, int64_t G, const T* w, int64_t R, T* img,
                 const T* x_img, T* dw) {
  const int64_t L = geom.OH * geom.OW, Cg = geom.C / G, Rg = R / G, K = Cg * geom.kH * geom.kW;
  if (img) std::fill(img, img + N * geom.C * geom.H * geom.W, T(0));
  if (dw && N == 0) std::fill(dw, dw + R * K, T(0));
  const int64_t nb = chunk_of(N, K, L);
  TensorImplPtr col = empty({K * nb * L}, dtype_of<T>());
  TensorImplPtr scn = empty({R * nb * L}, dtype_of<T>());
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t m = std::min(nb, N - n0), cols = m * L;
    kernels::nc_to_cn<T>(src, R, L, n0, m, scn->data<T>());
    for (int64_t g = 0; g < G; ++g) {
      const T* sg = scn->data<T>() + g * Rg * cols;
      if (img) {
        gemm0<T>(K, cols, Rg, w + g * Rg * K, {true, std::max<int64_t>(K, 1)}, sg, {false, std::max<int64_t>(cols, 1)},
                 false, col->data<T>(), cols);
        kernels::col2im<T>(col->data<T>(), geom, n0, m, g * Cg, Cg, img);
      }
      if (dw) {
        kernels::im2col<T>(x_img, geom, n0, m, g * Cg, Cg, col->data<T>());
        gemm0<T>(Rg, K, cols, sg, {false, std::max<int64_t>(cols, 1)}, col->data<T>(),
                 {true, std::max<int64_t>(cols, 1)}, n0 > 0, dw + g * Rg * K, K);
      }
    }
  }
}

template <class T>
void add_bias(T* y, const T* bias, int64_t N, int64_t C, int64_t L) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      T* p = y + (n * C + c) * L;
      for (int64_t l = 0; l < L; ++l) p[l] += bias[c];
    }
}

template <class T>
const T* ptr(const TensorImplPtr& t) {
  return t ? t->data<T>() : nullptr;
}
template <class T>
T* mptr(const TensorImplPtr& t) {
  return t ? t->data<T>() : nullptr;
}

}  // namespace

TensorImplPtr convolution(const TensorImplPtr& x, const TensorImplPtr& weight, const TensorImplPtr& bias,
                          const ConvSpec& spec, const char* op) {
  Plan p = make_plan(x, weight, bias, spec, op);
  DType in = promote_types(x->dtype, weight->dtype);
  if (bias) in = promote_types(in, bias->dtype);
  if (!autocast_state().enabled || !is_floating(in)) {
    LUCID_CHECK_DTYPE(x->dtype == weight->dtype && (!bias || bias->dtype == x->dtype), op, ": input dtype ",
                      dtype_name(x->dtype), ", weight dtype ", dtype_name(weight->dtype),
                      bias ? str(" and bias dtype ", dtype_name(bias->dtype)) : std::string(), " should be the same");
  }
  LUCID_CHECK_DTYPE(is_floating(in), op, ": expected a floating input, got ", dtype_name(in));
  const DType cd = compute_dtype(ConvolutionBackward::schema_v1, in);
  const DType wd = is_half(cd) ? DType::Float32 : cd;
  auto xc = contiguous_raw(cast_raw(x, wd));
  auto wc = contiguous_raw(cast_raw(weight, wd));
  auto bc = bias ? contiguous_raw(cast_raw(bias, wd)) : nullptr;
  auto y = empty(p.y_shape, wd);
  const ConvGeom& g = p.geom;
  if (wd == DType::Float32 || wd == DType::Float64) {
    auto run = [&]<class T>() {
      if (!spec.transposed) {
        im2col_gemm<T>(xc->data<T>(), g, p.N, p.G, wc->data<T>(), p.Cy, ptr<T>(bc), y->data<T>());
      } else {
        gemm_col2im<T>(xc->data<T>(), g, p.N, p.G, wc->data<T>(), p.Cx, y->data<T>(), nullptr, nullptr);
        if (bc) add_bias<T>(y->data<T>(), bc->data<T>(), p.N, p.Cy, g.H * g.W);
      }
    };
    if (wd == DType::Float32) run.template operator()<float>();
    else run.template operator()<double>();
  }
  if (any_requires_grad({&x, &weight, &bias})) {
    auto node = std::make_shared<ConvolutionBackward>();
    node->set_inputs({x, weight, bias});
    node->save(0, x);
    node->save(1, weight);
    node->spec_ = spec;
    node->x_shape_ = x->shape, node->w_shape_ = weight->shape;
    node->x_dtype_ = x->dtype, node->w_dtype_ = weight->dtype;
    if (bias) node->bias_shape_ = bias->shape, node->bias_dtype_ = bias->dtype;
    node->compute_dtype_ = cd;
    auto out = cast_raw(y, cd);
    attach_node(out, std::move(node));
    return out;
  }
  return cast_raw(y, cd);
}

namespace {

// {dx, dW, db} (raw, in the working dtype wd) of a convolution with input x, weight w and
// output gradient gy; nullptr where not asked for.
std::array<TensorImplPtr, 3> conv_grads(const TensorImplPtr& x, const TensorImplPtr& w, const TensorImplPtr& grad_out,
                                        const ConvSpec& spec, const Shape& bias_shape, DType wd, bool need_dx,
                                        bool need_dw, bool need_db) {
  Plan p = make_plan(x, w, nullptr, spec, "ConvolutionBackward");
  LUCID_CHECK_SHAPE(grad_out->shape == p.y_shape, "ConvolutionBackward: grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(p.y_shape));
  LUCID_CHECK_DTYPE(is_floating(grad_out->dtype), "ConvolutionBackward: expected a floating grad_out, got ",
                    dtype_name(grad_out->dtype));
  auto xc = contiguous_raw(cast_raw(x, wd));
  auto wc = contiguous_raw(cast_raw(w, wd));
  auto gy = contiguous_raw(cast_raw(grad_out, wd));
  auto dx = need_dx ? empty(x->shape, wd) : nullptr;
  auto dw = need_dw ? empty(w->shape, wd) : nullptr;
  auto db = need_db ? empty(bias_shape, wd) : nullptr;
  const ConvGeom& g = p.geom;
  auto run = [&]<class T>() {
    if (!spec.transposed) {
      // Image = x (Cx channels), grid = y: dx = col2im(W^T dy), dW = dy im2col(x)^T.
      gemm_col2im<T>(gy->data<T>(), g, p.N, p.G, wc->data<T>(), p.Cy, mptr<T>(dx), xc->data<T>(), mptr<T>(dw));
      if (db) kernels::bias_grad<T>(gy->data<T>(), p.N, p.Cy, g.OH * g.OW, db->data<T>());
    } else {
      // Image = y (Cy channels), grid = x: dx = W im2col(dy), dW = x im2col(dy)^T.
      if (dx) im2col_gemm<T>(gy->data<T>(), g, p.N, p.G, wc->data<T>(), p.Cx, nullptr, dx->data<T>());
      if (dw) {
        const int64_t L = g.OH * g.OW, Cg = g.C / p.G, Rg = p.Cx / p.G, K = Cg * g.kH * g.kW;
        std::fill(dw->data<T>(), dw->data<T>() + dw->numel(), T(0));
        const int64_t nb = chunk_of(p.N, K, L);
        TensorImplPtr col = empty({K * nb * L}, wd);
        auto xcn = empty({p.Cx * nb * L}, wd);
        for (int64_t n0 = 0; n0 < p.N; n0 += nb) {
          const int64_t m = std::min(nb, p.N - n0), cols = m * L;
          kernels::nc_to_cn<T>(xc->data<T>(), p.Cx, L, n0, m, xcn->data<T>());
          for (int64_t gi = 0; gi < p.G; ++gi) {
            kernels::im2col<T>(gy->data<T>(), g, n0, m, gi * Cg, Cg, col->data<T>());
            gemm0<T>(Rg, K, cols, xcn->data<T>() + gi * Rg * cols, {false, std::max<int64_t>(cols, 1)},
                     col->data<T>(), {true, std::max<int64_t>(cols, 1)}, true, dw->data<T>() + gi * Rg * K, K);
          }
        }
      }
      if (db) kernels::bias_grad<T>(gy->data<T>(), p.N, p.Cy, g.H * g.W, db->data<T>());
    }
  };
  if (wd == DType::Float32) run.template operator()<float>();
  else run.template operator()<double>();
  return {dx, dw, db};
}

}  // namespace

std::vector<TensorImplPtr> ConvolutionBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  LUCID_CHECK_DTYPE(grad_out != nullptr, "ConvolutionBackward: grad_out is None");
  const bool need_dx = needs_input_grad(0), need_dw = needs_input_grad(1), need_db = needs_input_grad(2);
  if (!need_dx && !need_dw && !need_db) return {nullptr, nullptr, nullptr};
  const DType wd = is_half(compute_dtype_) ? DType::Float32 : compute_dtype_;
  auto [dx, dw, db] = conv_grads(x, w, grad_out, spec_, bias_shape_, wd, need_dx, need_dw, need_db);
  return {dx ? cast_raw(dx, x_dtype_) : nullptr, dw ? cast_raw(dw, w_dtype_) : nullptr,
          db ? cast_raw(db, bias_dtype_) : nullptr};
}

// The convolution is bilinear, y = C(x, W) + b, with dx = C(., W)^T g and dW = C(x, .)^T g. So
// for the node of dx with upstream u: d g = C(u, W), d W = (C(u, .)^T g), i.e. the weight
// gradient of the convolution at input u; for the node of dW: d g = C(x, u), d x = C(., u)^T g;
// for the node of db: d g = u broadcast over the output. Every term is one of the op's own passes.
std::vector<TensorImplPtr> ConvolutionBackward::apply_graph(const TensorImplPtr& grad_out) {
  std::vector<TensorImplPtr> res;
  {
    NoGradGuard no_grad;
    res = apply(grad_out);
  }
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  if (!any_requires_grad({&grad_out, &x, &w})) return res;
  for (int k = 0; k < 3; ++k) {
    if (!res[size_t(k)]) continue;
    auto n = std::make_shared<ConvolutionBackwardBackward>();
    n->set_inputs({grad_out, x, w});
    n->save(0, grad_out), n->save(1, x), n->save(2, w);
    n->spec_ = spec_;
    n->wrt_ = k;
    n->compute_dtype_ = compute_dtype_;
    attach_node(res[size_t(k)], std::move(n));
  }
  return res;
}

const OpSchema& ConvolutionBackwardBackward::schema_v1 = register_schema(
    {.name = "convolution_backward", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

std::vector<TensorImplPtr> ConvolutionBackwardBackward::apply(const TensorImplPtr& up) {
  const TensorImplPtr &g = saved_[0], &x = saved_[1], &w = saved_[2];
  const DType wd = is_half(compute_dtype_) ? DType::Float32 : compute_dtype_;
  const bool need_g = needs_input_grad(0), need_x = needs_input_grad(1), need_w = needs_input_grad(2);
  auto u = cast_raw(up, wd);
  TensorImplPtr dg, dx, dw;
  auto conv_raw = [&](const TensorImplPtr& a, const TensorImplPtr& b) {
    NoGradGuard no_grad;
    return convolution(cast_raw(a, wd), cast_raw(b, wd), nullptr, spec_, "ConvolutionBackward");
  };
  if (wrt_ == 0) {  // upstream of dx
    if (need_g) dg = conv_raw(u, w);
    if (need_w) dw = conv_grads(u, w, g, spec_, {}, wd, false, true, false)[1];
  } else if (wrt_ == 1) {  // upstream of dW
    if (need_g) dg = conv_raw(x, u);
    if (need_x) dx = conv_grads(x, u, g, spec_, {}, wd, true, false, false)[0];
  } else if (need_g) {  // upstream of db: broadcast over (N,) C, spatial
    Shape bshape(g->shape.size(), 1);
    const size_t cdim = g->ndim() == spec_.dims + 2 ? 1 : 0;
    bshape[cdim] = u->numel();
    dg = contiguous_raw(expand(make_view(contiguous_raw(u), bshape, contiguous_strides(bshape), 0), g->shape));
  }
  return {dg ? cast_raw(dg, g->dtype) : nullptr, dx ? cast_raw(dx, x->dtype) : nullptr,
          dw ? cast_raw(dw, w->dtype) : nullptr};
}

}  // namespace lucid

namespace lucid {

std::vector<TensorImplPtr> ConvolutionBackwardBackward::apply_graph(const TensorImplPtr& up) {
  const TensorImplPtr &g = saved_[0], &x = saved_[1], &w = saved_[2];
  const DType wd = is_half(compute_dtype_) ? DType::Float32 : compute_dtype_;
  const bool need_g = needs_input_grad(0), need_x = needs_input_grad(1), need_w = needs_input_grad(2);
  auto u = to(up, wd, false);
  // One gradient (slot 0: input, 1: weight) of the convolution of (a, b) at grad_out g, recorded:
  // a ConvolutionBackward that only serves as the calculator, wired to this node's edge.
  auto conv_grad = [&](const TensorImplPtr& a, const TensorImplPtr& b, size_t slot, DType out_dtype) {
    auto n = std::make_shared<ConvolutionBackward>();
    n->next_edges = {Edge{}, Edge{}, Edge{}};
    n->next_edges[slot] = next_edges[slot == 0 ? 1 : 2];
    n->save(0, a), n->save(1, b);
    n->spec_ = spec_;
    n->compute_dtype_ = compute_dtype_;
    n->x_dtype_ = n->w_dtype_ = out_dtype;
    return n->apply_graph(to(g, wd, false))[slot];
  };
  TensorImplPtr dg, dx, dw;
  if (wrt_ == 0) {  // upstream of dx
    if (need_g) dg = convolution(u, to(w, wd, false), nullptr, spec_, "ConvolutionBackward");
    if (need_w) dw = conv_grad(u, w, 1, w->dtype);
  } else if (wrt_ == 1) {  // upstream of dW
    if (need_g) dg = convolution(to(x, wd, false), u, nullptr, spec_, "ConvolutionBackward");
    if (need_x) dx = conv_grad(x, u, 0, x->dtype);
  } else if (need_g) {  // upstream of db: broadcast over (N,) C, spatial
    Shape bshape(g->shape.size(), 1);
    const size_t cdim = g->ndim() == spec_.dims + 2 ? 1 : 0;
    bshape[cdim] = u->numel();
    dg = expand(reshape(u, bshape), g->shape);
  }
  return {dg ? to(dg, g->dtype, false) : nullptr, dx, dw};
}

}  // namespace lucid
