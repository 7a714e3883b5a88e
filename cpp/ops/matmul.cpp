#include "ops/matmul.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "autograd/func_op.h"
#include "core/autocast.h"
#include "core/threads.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/matmul.h"
#include "ops/grad_graph.h"
#include "ops/reduce.h"
#include "ops/view.h"

namespace lucid {

namespace {

using kernels::MatLayout;

// The BLAS layout of a [rows, cols] matrix with strides (rs, cs), when one exists: rows stored
// contiguously (as is) or columns stored contiguously (transposed), with a valid leading dim.
// The stride of a size-1 dim never matters.
std::optional<MatLayout> layout_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cols == 1 || cs == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1) && ld <= kernels::kBlasMaxDim) return MatLayout{false, ld};
  }
  if (rows == 1 || rs == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1) && ld <= kernels::kBlasMaxDim) return MatLayout{true, ld};
  }
  return std::nullopt;
}

std::optional<MatLayout> last2_layout(const TensorImplPtr& t) {
  int64_t n = t->ndim();
  return layout_of(t->shape[n - 2], t->shape[n - 1], t->strides[n - 2], t->strides[n - 1]);
}

TensorImplPtr transpose_last2(const TensorImplPtr& t) {
  Shape s = t->shape, st = t->strides;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  std::swap(st[st.size() - 1], st[st.size() - 2]);
  return make_view(t, s, st, t->offset);
}

// A 1-D left operand as a row [1, K], a 1-D right operand as a column [K, 1] (views).
TensorImplPtr as_matrix(const TensorImplPtr& t, bool left) {
  if (t->ndim() != 1) return t;
  if (left) return make_view(t, {1, t->shape[0]}, {t->shape[0] * t->strides[0], t->strides[0]}, t->offset);
  return make_view(t, {t->shape[0], 1}, {t->strides[0], 1}, t->offset);
}
Shape matrix_shape(const Shape& s, bool left) {
  if (s.size() != 1) return s;
  return left ? Shape{1, s[0]} : Shape{s[0], 1};
}

// t [..., K] as a 2-D [rows, K] view when its leading dims coalesce, else as a copy.
TensorImplPtr rows_view(const TensorImplPtr& t) {
  const int64_t nd = t->ndim(), k = t->shape[nd - 1];
  int64_t rows = 1, rs = std::max<int64_t>(k, 1), expect = -1;
  bool ok = true;
  for (int64_t d = nd - 2; d >= 0; --d) {
    if (t->shape[d] == 1) continue;
    if (expect < 0) rs = t->strides[d];
    else ok = ok && t->strides[d] == expect;
    expect = t->strides[d] * t->shape[d];
    rows *= t->shape[d];
  }
  if (ok) {
    auto v = make_view(t, {rows, k}, {rs, t->strides[nd - 1]}, t->offset);
    if (last2_layout(v)) return v;
  }
  auto c = contiguous_raw(t);
  return make_view(c, {rows, k}, {std::max<int64_t>(k, 1), 1}, c->offset);
}

// Runs f.operator()<T>() with T the gemm type of `dt`.
template <class F>
void with_gemm_type(DType dt, const char* op, F f) {
  switch (dt) {
    case DType::Float32: f.template operator()<float>(); break;
    case DType::Float64: f.template operator()<double>(); break;
    case DType::Int64: f.template operator()<int64_t>(); break;
    default: throw DtypeMismatch(str(op, ": not supported for ", dtype_name(dt), " tensors"));
  }
}

bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

void check_blas_dims(const char* op, int64_t m, int64_t n, int64_t k) {
  LUCID_CHECK(m <= kernels::kBlasMaxDim && n <= kernels::kBlasMaxDim && k <= kernels::kBlasMaxDim, op,
              ": matrix dims ", m, " x ", k, " x ", n, " exceed the 32-bit BLAS limit");
}

// Multiply-adds of one product from which kernels::gemm splits it over the threads itself, and
// per thread below which a batch of smaller products stays on one thread.
constexpr int64_t kSplitProduct = int64_t(1) << 19, kBatchGrain = int64_t(1) << 16;

// a [..., M, K] @ b [..., K, N] (ndim >= 2 each, one dtype, inner dims checked) -> a new
// contiguous [batch..., M, N]. No autograd.
TensorImplPtr matmul_raw(TensorImplPtr a, TensorImplPtr b, const char* op) {
  const DType dt = a->dtype;
  if (is_half(dt)) a = cast_raw(a, DType::Float32), b = cast_raw(b, DType::Float32);
  const int64_t na = a->ndim(), nb = b->ndim();
  int64_t M = a->shape[na - 2], K = a->shape[na - 1], N = b->shape[nb - 1];
  Shape ab(a->shape.begin(), a->shape.end() - 2), bb(b->shape.begin(), b->shape.end() - 2);
  Shape batch = broadcast_shapes(ab, bb, op);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  auto out = empty(out_shape, a->dtype);
  if (out->numel() > 0 && K == 0) std::memset(out->raw(), 0, size_t(out->numel()) * itemsize(out->dtype));
  if (out->numel() > 0 && K > 0) {
    auto la = last2_layout(a), lb = last2_layout(b);
    if (!la) a = contiguous_raw(a), la = last2_layout(a);
    if (!lb) b = contiguous_raw(b), lb = last2_layout(b);
    Shape as = broadcast_strides(ab, Shape(a->strides.begin(), a->strides.end() - 2), batch);
    Shape bs = broadcast_strides(bb, Shape(b->strides.begin(), b->strides.end() - 2), batch);
    int64_t nbatch = numel_of(batch);
    // b shared by the whole batch and a's batch dims continuing its rows: one tall gemm.
    if (nbatch > 1 && !la->trans && std::all_of(bs.begin(), bs.end(), [](int64_t s) { return s == 0; })) {
      int64_t expect = M * la->ld;
      bool fold = true;
      for (size_t d = batch.size(); d-- > 0;) {
        if (batch[d] == 1) continue;
        fold = fold && as[d] == expect;
        expect *= batch[d];
      }
      if (fold) M *= nbatch, nbatch = 1;
    }
    check_blas_dims(op, M, N, K);
    with_gemm_type(a->dtype, op, [&]<class T>() {
      const T* pa = a->template data<T>();
      const T* pb = b->template data<T>();
      T* pc = out->template data<T>();
      auto run = [&](int64_t b0, int64_t b1) {
        for (int64_t bi = b0; bi < b1; ++bi) {
          int64_t oa = 0, ob = 0, r = bi;
          for (size_t d = batch.size(); d-- > 0;) {
            int64_t i = r % batch[d];
            r /= batch[d];
            oa += i * as[d], ob += i * bs[d];
          }
          kernels::gemm<T>(M, N, K, pa + oa, *la, pb + ob, *lb, T(0), pc + bi * M * N, N);
        }
      };
      // A batch of products each too small to split (attention's per-head q @ k^T): the batch is
      // shared out over the threads instead, each product whole on one thread.
      const int64_t work = M * N * K;
      int nt = 1;
      if (nbatch > 1 && work < kSplitProduct)
        nt = int(std::min<int64_t>({int64_t(num_threads()), nbatch, nbatch * work / kBatchGrain}));
      if (nt <= 1) return run(0, nbatch);
      kernels::parallel_threads(nt, [&](int t) { run(nbatch * t / nt, nbatch * (t + 1) / nt); });
    });
  }
  return is_half(dt) ? cast_raw(out, dt) : out;
}

// The dtype a matrix op runs in: the autocast dtype for floating operands under autocast,
// else the operands' common dtype (they must agree, as in PyTorch).
DType mm_dtype(const char* op, const OpSchema& schema, const TensorImplPtr& a, const TensorImplPtr& b,
               const TensorImplPtr& c = nullptr) {
  bool all_float = is_floating(a->dtype) && is_floating(b->dtype) && (!c || is_floating(c->dtype));
  if (all_float && autocast_state().enabled) {
    DType p = promote_types(a->dtype, b->dtype);
    return compute_dtype(schema, c ? promote_types(p, c->dtype) : p);
  }
  LUCID_CHECK_DTYPE(a->dtype == b->dtype && (!c || c->dtype == a->dtype), op,
                    ": expected all operands to have the same dtype, got ", dtype_name(a->dtype), " and ",
                    dtype_name(b->dtype), c ? str(" and ", dtype_name(c->dtype)) : std::string());
  LUCID_CHECK_DTYPE(a->dtype != DType::Bool, op, ": not supported for bool tensors");
  return a->dtype;
}

// Reduces a product's gradient to an operand's (matrix) shape, then views it in `shape`.
TensorImplPtr reduce_to(const TensorImplPtr& g, const Shape& mshape, const Shape& shape, DType dtype) {
  auto r = contiguous_raw(sum_to(g, mshape));
  return cast_raw(make_view(r, shape, contiguous_strides(shape), r->offset), dtype);
}

struct MatmulBackward : FuncOp<MatmulBackward, 2> {
  static const OpSchema& schema_v1;
  Shape a_shape, b_shape;
  DType a_dtype, b_dtype;
  const char* name() const override { return "MatmulBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g0) {
    const TensorImplPtr &a = saved_[0], &b = saved_[1];  // b saved iff dA needed, a iff dB needed
    auto g = cast_raw(g0, (a ? a : b)->dtype);
    Shape am = matrix_shape(a_shape, true), bm = matrix_shape(b_shape, false);
    // The gradient viewed with the dims a 1-D operand dropped put back (size 1: any stride).
    Shape gs = g->shape, gst = g->strides;
    if (a_shape.size() == 1) gs.insert(gs.end() - (b_shape.size() == 1 ? 0 : 1), 1), gst.insert(gst.end() - (b_shape.size() == 1 ? 0 : 1), 1);
    if (b_shape.size() == 1) gs.push_back(1), gst.push_back(1);
    auto g2 = make_view(g, gs, gst, g->offset);
    TensorImplPtr ga, gb;
    if (needs_input_grad(0)) ga = reduce_to(matmul_raw(g2, transpose_last2(as_matrix(b, false)), "matmul_backward"), am, a_shape, a_dtype);
    if (needs_input_grad(1)) {
      auto a2 = as_matrix(a, true);
      if (bm.size() == 2 && am.size() > 2) {  // b shared by a's batch: one gemm over all rows
        auto r = matmul_raw(transpose_last2(rows_view(a2)), rows_view(g2), "matmul_backward");
        gb = cast_raw(make_view(r, b_shape, contiguous_strides(b_shape), r->offset), b_dtype);
      } else {
        gb = reduce_to(matmul_raw(transpose_last2(a2), g2, "matmul_backward"), bm, b_shape, b_dtype);
      }
    }
    return {ga, gb};
  }
  // With 1-D operands viewed as matrices (a as a row, b as a column) and the dropped dims of g
  // put back: dA = g B^T and dB = A^T g, each summed over broadcast batch dims.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g0) {
    const TensorImplPtr &a = saved_[0], &b = saved_[1];
    auto g = to(g0, (a ? a : b)->dtype, false);
    if (a_shape.size() == 1) g = unsqueeze(g, b_shape.size() == 1 ? g->ndim() : g->ndim() - 1);
    if (b_shape.size() == 1) g = unsqueeze(g, g->ndim());
    TensorImplPtr ga, gb;
    if (needs_input_grad(0)) {
      auto b2 = b_shape.size() == 1 ? unsqueeze(b, 1) : b;
      auto r = matmul(g, transpose(b2, -1, -2));
      Shape am = matrix_shape(a_shape, true);
      ga = to(reshape(sum_to_graph(r, am), a_shape), a_dtype, false);
    }
    if (needs_input_grad(1)) {
      auto a2 = a_shape.size() == 1 ? unsqueeze(a, 0) : a;
      auto r = matmul(transpose(a2, -1, -2), g);
      Shape bm = matrix_shape(b_shape, false);
      gb = to(reshape(sum_to_graph(r, bm), b_shape), b_dtype, false);
    }
    return {ga, gb};
  }
};
const OpSchema& MatmulBackward::schema_v1 = register_schema(
    {.name = "matmul", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

struct LinearBackward : FuncOp<LinearBackward, 3> {
  static const OpSchema& schema_v1;
  Shape x_shape, b_shape;
  DType x_dtype, w_dtype, b_dtype;
  const char* name() const override { return "LinearBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g0) {
    const TensorImplPtr &x = saved_[0], &w = saved_[1];  // w saved iff dx needed, x iff dW needed
    const TensorImplPtr& s = x ? x : w;  // null when only the bias needs a gradient
    auto g = s ? cast_raw(g0, s->dtype) : g0;
    TensorImplPtr gx, gw, gb;
    if (needs_input_grad(0) || needs_input_grad(1)) {
      auto g2 = rows_view(g);
      if (needs_input_grad(0)) {
        auto r = matmul_raw(g2, w, "linear_backward");
        gx = cast_raw(make_view(r, x_shape, contiguous_strides(x_shape), r->offset), x_dtype);
      }
      if (needs_input_grad(1)) gw = cast_raw(matmul_raw(transpose_last2(g2), rows_view(x), "linear_backward"), w_dtype);
    }
    if (needs_input_grad(2)) gb = cast_raw(contiguous_raw(sum_to(g, b_shape)), b_dtype);
    return {gx, gw, gb};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g0) {
    const TensorImplPtr &x = saved_[0], &w = saved_[1];
    const TensorImplPtr& s = x ? x : w;
    auto g = s ? to(g0, s->dtype, false) : g0;
    TensorImplPtr gx, gw, gb;
    if (needs_input_grad(0)) gx = to(matmul(g, w), x_dtype, false);
    if (needs_input_grad(1)) {
      const int64_t in = x->shape.empty() ? 1 : x->shape.back();
      auto g2 = reshape(g, {-1, g->shape.empty() ? 1 : g->shape.back()});
      gw = to(matmul(transpose(g2, 0, 1), reshape(x, {-1, in})), w_dtype, false);
    }
    if (needs_input_grad(2)) gb = grad_for_graph(g, b_shape, b_dtype);
    return {gx, gw, gb};
  }
};
const OpSchema& LinearBackward::schema_v1 = register_schema(
    {.name = "linear", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

// y [rows..., out] = x W^T + bias, bias copied into y first and accumulated onto by the gemm.
TensorImplPtr linear_raw(TensorImplPtr x, TensorImplPtr w, const TensorImplPtr& bias, const Shape& out_shape) {
  const DType dt = x->dtype;
  if (is_half(dt)) x = cast_raw(x, DType::Float32), w = cast_raw(w, DType::Float32);
  auto out = empty(out_shape, x->dtype);
  if (out->numel() == 0) return is_half(dt) ? cast_raw(out, dt) : out;
  const int64_t in = w->shape[1], outf = w->shape[0];
  if (bias) copy_into(out, bias);  // the product adds into it (beta 1)
  else if (in == 0) std::memset(out->raw(), 0, size_t(out->numel()) * itemsize(out->dtype));  // beta 0 writes all
  if (in > 0) {
    auto x2 = rows_view(x);
    auto lx = last2_layout(x2);
    auto wt = transpose_last2(w);  // [in, out]
    auto lw = last2_layout(wt);
    if (!lw) wt = transpose_last2(contiguous_raw(w)), lw = last2_layout(wt);
    check_blas_dims("linear", x2->shape[0], outf, in);
    with_gemm_type(x->dtype, "linear", [&]<class T>() {
      kernels::gemm<T>(x2->shape[0], outf, in, x2->template data<T>(), *lx, wt->template data<T>(), *lw,
                       T(bias ? 1 : 0), out->template data<T>(), outf);
    });
  }
  return is_half(dt) ? cast_raw(out, dt) : out;
}

}  // namespace

TensorImplPtr matmul(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_SHAPE(a->ndim() >= 1 && b->ndim() >= 1, "matmul: both arguments need at least 1 dim, got shapes ",
                    shape_str(a->shape), " and ", shape_str(b->shape));
  DType dt = mm_dtype("matmul", MatmulBackward::schema_v1, a, b);
  auto ac = cast_raw(a, dt), bc = cast_raw(b, dt);
  auto a2 = as_matrix(ac, true), b2 = as_matrix(bc, false);
  const int64_t ka = a2->shape[a2->ndim() - 1], kb = b2->shape[b2->ndim() - 2];
  LUCID_CHECK_SHAPE(ka == kb, "matmul: shapes ", shape_str(a->shape), " and ", shape_str(b->shape),
                    " cannot be multiplied (inner dims ", ka, " and ", kb, " differ)");
  auto out = matmul_raw(a2, b2, "matmul");
  if (a->ndim() == 1 || b->ndim() == 1) {
    Shape s(out->shape.begin(), out->shape.end() - 2);
    if (a->ndim() != 1) s.push_back(out->shape[out->ndim() - 2]);
    if (b->ndim() != 1) s.push_back(out->shape[out->ndim() - 1]);
    out = make_view(out, s, contiguous_strides(s), out->offset);
  }
  if (any_requires_grad({&a, &b})) {
    auto n = std::make_shared<MatmulBackward>();
    n->a_shape = a->shape, n->b_shape = b->shape, n->a_dtype = a->dtype, n->b_dtype = b->dtype;
    n->set_inputs({a, b});
    if (n->needs_input_grad(1)) n->save(0, ac);
    if (n->needs_input_grad(0)) n->save(1, bc);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr mm(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_SHAPE(a->ndim() == 2 && b->ndim() == 2, "mm: expected two 2-D tensors, got shapes ",
                    shape_str(a->shape), " and ", shape_str(b->shape));
  return matmul(a, b);
}

TensorImplPtr bmm(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_SHAPE(a->ndim() == 3 && b->ndim() == 3, "bmm: expected two 3-D tensors, got shapes ",
                    shape_str(a->shape), " and ", shape_str(b->shape));
  LUCID_CHECK_SHAPE(a->shape[0] == b->shape[0], "bmm: batch sizes differ: shapes ", shape_str(a->shape), " and ",
                    shape_str(b->shape));
  return matmul(a, b);
}

TensorImplPtr dot(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_SHAPE(a->ndim() == 1 && b->ndim() == 1, "dot: expected two 1-D tensors, got shapes ",
                    shape_str(a->shape), " and ", shape_str(b->shape));
  LUCID_CHECK_SHAPE(a->shape[0] == b->shape[0], "dot: tensors of shapes ", shape_str(a->shape), " and ",
                    shape_str(b->shape), " differ in size");
  return matmul(a, b);
}

TensorImplPtr linear(const TensorImplPtr& x, const TensorImplPtr& w, const TensorImplPtr& bias) {
  LUCID_CHECK_SHAPE(w->ndim() == 2, "linear: weight must be 2-D [out_features, in_features], got shape ",
                    shape_str(w->shape));
  LUCID_CHECK_SHAPE(x->ndim() >= 1 && x->shape.back() == w->shape[1], "linear: input shape ", shape_str(x->shape),
                    " does not end in in_features = ", w->shape[1], " of weight shape ", shape_str(w->shape));
  Shape out_shape = x->shape;
  out_shape.back() = w->shape[0];
  if (bias)
    LUCID_CHECK_SHAPE(bias->ndim() <= int64_t(out_shape.size()) &&
                          broadcast_shapes(bias->shape, out_shape, "linear") == out_shape,
                      "linear: bias shape ", shape_str(bias->shape), " cannot be broadcast to the output shape ",
                      shape_str(out_shape));
  DType dt = mm_dtype("linear", LinearBackward::schema_v1, x, w, bias);
  auto xc = cast_raw(x, dt), wc = cast_raw(w, dt);
  auto bc = bias ? cast_raw(bias, dt) : nullptr;
  auto out = linear_raw(xc, wc, bc, out_shape);
  if (any_requires_grad({&x, &w, &bias})) {
    auto n = std::make_shared<LinearBackward>();
    n->x_shape = x->shape, n->x_dtype = x->dtype, n->w_dtype = w->dtype;
    if (bias) n->b_shape = bias->shape, n->b_dtype = bias->dtype;
    n->set_inputs({x, w, bias});
    if (n->needs_input_grad(1)) n->save(0, xc);
    if (n->needs_input_grad(0)) n->save(1, wc);
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace lucid
