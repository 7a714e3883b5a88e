#include "ops/attention.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>

#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "kernels/cpu/attention.h"
#include "ops/binary.h"
#include "ops/factory.h"
#include "ops/grad_graph.h"
#include "ops/join.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& ScaledDotProductAttentionBackward::schema_v1 = register_schema(
    {.name = "scaled_dot_product_attention", .version = 1, .amp_policy = AmpPolicy::Promote, .produces_grad = true});

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// The operands viewed (no copy) with a common batch rank: batch dims broadcast to `batch`,
// and with grouped-query attention the head dim split as (Hk, G) for q and the mask, (Hk, 1)
// for k and v, so that plain broadcasting pairs query head h with kv head h / G.
struct Plan {
  Shape batch;
  TensorImplPtr q, k, v, m;
  std::vector<int64_t> q_off, k_off, v_off, m_off;
  int64_t heads = 0, L = 0, S = 0, E = 0, Ev = 0;
};

// Splits dim -3 (size H, stride st) into (H / g, g) with strides (st * g, st), or, for k and v,
// into (H, 1). A mask's dim -3 of size 1 becomes (1, 1).
TensorImplPtr split_heads(const TensorImplPtr& t, int64_t g, bool kv) {
  if (t->ndim() < 3) return t;
  Shape shape = t->shape, strides = t->strides;
  const size_t d = shape.size() - 3;
  const int64_t h = shape[d], st = strides[d];
  if (kv) {
    shape.insert(shape.begin() + d + 1, 1), strides.insert(strides.begin() + d + 1, 0);
  } else if (h == 1) {
    shape.insert(shape.begin() + d + 1, 1), strides.insert(strides.begin() + d + 1, 0);
  } else {
    shape[d] = h / g, strides[d] = st * g;
    shape.insert(shape.begin() + d + 1, g), strides.insert(strides.begin() + d + 1, st);
  }
  return make_view(t, shape, strides, t->offset);
}

Shape batch_of(const TensorImplPtr& t) { return Shape(t->shape.begin(), t->shape.end() - 2); }

// Element offset of every head of `t` (row-major over `batch`) through its broadcast strides.
std::vector<int64_t> head_offsets(const TensorImplPtr& t, const Shape& batch) {
  const Shape bs = broadcast_strides(batch_of(t), Shape(t->strides.begin(), t->strides.end() - 2), batch);
  const int64_t heads = numel_of(batch), nd = int64_t(batch.size());
  std::vector<int64_t> off(static_cast<size_t>(heads));
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t o = 0;
  for (int64_t n = 0; n < heads; ++n) {
    off[size_t(n)] = o;
    for (int64_t d = nd - 1; d >= 0; --d) {
      o += bs[d];
      if (++idx[d] < batch[d]) break;
      o -= bs[d] * batch[d];
      idx[d] = 0;
    }
  }
  return off;
}

// q, k, v (ndim >= 2, unit last stride) and the additive mask (or null) in the compute dtype;
// g = query heads per kv head (1: no grouping).
Plan make_plan(const TensorImplPtr& q, const TensorImplPtr& k, const TensorImplPtr& v, const TensorImplPtr& mask,
               int64_t g) {
  Plan p;
  p.L = q->shape[q->ndim() - 2], p.E = q->shape.back();
  p.S = k->shape[k->ndim() - 2], p.Ev = v->shape.back();
  p.q = g > 1 ? split_heads(q, g, false) : q;
  p.k = g > 1 ? split_heads(k, g, true) : k;
  p.v = g > 1 ? split_heads(v, g, true) : v;
  p.batch = broadcast_shapes(broadcast_shapes(batch_of(p.q), batch_of(p.k), kOp), batch_of(p.v), kOp);
  if (mask) {
    TensorImplPtr m = mask;
    if (m->ndim() < 2) {  // right-align a 0-d or 1-d mask against (L, S)
      Shape s = m->shape, st = m->strides;
      while (s.size() < 2) s.insert(s.begin(), 1), st.insert(st.begin(), 0);
      m = make_view(m, s, st, m->offset);
    }
    const int64_t ml = m->shape[m->ndim() - 2], ms = m->shape.back();
    LUCID_CHECK_SHAPE((ml == 1 || ml == p.L) && (ms == 1 || ms == p.S), kOp, ": attn_mask of shape ",
                      shape_str(mask->shape), " does not broadcast to the attention weights' (..., ", p.L, ", ", p.S,
                      ")");
    if (g > 1 && m->ndim() >= 3) {
      const int64_t mh = m->shape[m->ndim() - 3], hq = q->shape[q->ndim() - 3];
      LUCID_CHECK_SHAPE(mh == 1 || mh == hq, kOp, ": attn_mask of shape ", shape_str(mask->shape),
                        " does not broadcast over the ", hq, " query heads");
      m = split_heads(m, g, false);
    }
    const Shape mb = batch_of(m);
    bool fits = mb.size() <= p.batch.size();
    for (size_t i = 0; fits && i < mb.size(); ++i) {
      const int64_t d = mb[mb.size() - 1 - i];
      fits = d == 1 || d == p.batch[p.batch.size() - 1 - i];
    }
    LUCID_CHECK_SHAPE(fits, kOp, ": attn_mask of shape ", shape_str(mask->shape),
                      " does not broadcast to the attention weights' batch dims ", shape_str(p.batch));
    p.m = m;
  }
  p.heads = numel_of(p.batch);
  p.q_off = head_offsets(p.q, p.batch);
  p.k_off = head_offsets(p.k, p.batch);
  p.v_off = head_offsets(p.v, p.batch);
  if (p.m) p.m_off = head_offsets(p.m, p.batch);
  return p;
}

template <class T>
kernels::AttnArgs<T> args_of(const Plan& p, double scale, bool causal, const TensorImplPtr& keep, double keep_scale) {
  kernels::AttnArgs<T> a;
  a.heads = p.heads, a.L = p.L, a.S = p.S, a.E = p.E, a.Ev = p.Ev;
  a.q = p.q->data<T>(), a.k = p.k->data<T>(), a.v = p.v->data<T>();
  a.q_off = p.q_off.data(), a.k_off = p.k_off.data(), a.v_off = p.v_off.data();
  a.q_ld = p.q->strides[p.q->ndim() - 2], a.k_ld = p.k->strides[p.k->ndim() - 2];
  a.v_ld = p.v->strides[p.v->ndim() - 2];
  if (p.m) {
    const int64_t nd = p.m->ndim();
    a.mask = p.m->data<T>(), a.m_off = p.m_off.data();
    a.m_ls = p.m->shape[nd - 2] == 1 ? 0 : p.m->strides[nd - 2];
    a.m_ss = p.m->shape[nd - 1] == 1 ? 0 : p.m->strides[nd - 1];
  }
  a.scale = T(p.E == 0 ? 1.0 : scale);  // E = 0: every score is 0 (an explicit scale would give 0 * inf)
  a.causal = causal;
  if (keep) a.keep = keep->data<bool>(), a.keep_scale = T(keep_scale);
  return a;
}

// A copy in dtype `kd` (or t itself) whose last dim has unit stride, as the kernel reads rows.
TensorImplPtr prepare(const TensorImplPtr& t, DType kd) {
  auto c = cast_raw(t, kd);
  if (c->shape.back() > 1 && c->strides.back() != 1) c = contiguous_raw(c);
  return c;
}

// The mask as an additive tensor in `kd`: bool True -> 0, False -> -inf; a floating mask as is.
TensorImplPtr additive_mask(const TensorImplPtr& mask, DType kd) {
  if (mask->dtype != DType::Bool) return cast_raw(mask, kd);
  auto mc = contiguous_raw(mask);
  auto out = empty(mask->shape, kd);
  LUCID_DISPATCH_FLOAT(kd, kOp, [&] {
    using T = scalar_t;
    const bool* src = mc->data<bool>();
    T* dst = out->data<T>();
    const T ninf = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) dst[i] = src[i] ? T(0) : ninf;
  });
  return out;
}

Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// The gradient of an operand viewed as `viewed` (the plan's view) from its per-head buffer:
// summed over broadcast heads, reshaped to the input's shape and cast to its dtype.
TensorImplPtr grad_back(const TensorImplPtr& full, const Shape& viewed, const Shape& shape, DType dtype) {
  auto r = contiguous_raw(sum_to(full, viewed));
  return cast_raw(make_view(r, shape, contiguous_strides(shape), r->offset), dtype);
}

}  // namespace

TensorImplPtr scaled_dot_product_attention(const TensorImplPtr& q, const TensorImplPtr& k, const TensorImplPtr& v,
                                           const TensorImplPtr& attn_mask, double dropout_p, bool is_causal,
                                           std::optional<double> scale, bool enable_gqa) {
  LUCID_CHECK_SHAPE(q->ndim() >= 2 && k->ndim() >= 2 && v->ndim() >= 2, kOp,
                    ": expected query, key and value with at least 2 dims, got ", shape_str(q->shape), ", ",
                    shape_str(k->shape), " and ", shape_str(v->shape));
  LUCID_CHECK_DTYPE(is_floating(q->dtype) && k->dtype == q->dtype && v->dtype == q->dtype, kOp,
                    ": expected query, key and value of one floating dtype, got ", dtype_name(q->dtype), ", ",
                    dtype_name(k->dtype), " and ", dtype_name(v->dtype));
  const int64_t E = q->shape.back(), S = k->shape[k->ndim() - 2];
  LUCID_CHECK_SHAPE(k->shape.back() == E, kOp, ": key's last dim ", k->shape.back(), " (shape ",
                    shape_str(k->shape), ") does not match query's ", E, " (shape ", shape_str(q->shape), ")");
  LUCID_CHECK_SHAPE(v->shape[v->ndim() - 2] == S, kOp, ": value has ", v->shape[v->ndim() - 2],
                    " rows (shape ", shape_str(v->shape), ") but key has ", S, " (shape ", shape_str(k->shape), ")");
  LUCID_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, kOp, ": dropout probability has to be between 0 and 1, but got ",
              dropout_p);
  const bool half = q->dtype == DType::Float16 || q->dtype == DType::BFloat16;
  if (attn_mask)
    LUCID_CHECK_DTYPE(attn_mask->dtype == DType::Bool || attn_mask->dtype == q->dtype ||
                          (half && attn_mask->dtype == DType::Float32),
                      kOp, ": expected attn_mask of dtype bool or ", dtype_name(q->dtype), " (the query's), got ",
                      dtype_name(attn_mask->dtype));
  int64_t g = 1;
  if (enable_gqa && q->ndim() >= 3 && k->ndim() >= 3 && v->ndim() >= 3) {
    const int64_t hq = q->shape[q->ndim() - 3], hk = k->shape[k->ndim() - 3], hv = v->shape[v->ndim() - 3];
    if (hq != hk || hq != hv) {
      LUCID_CHECK_SHAPE(hk == hv && hk > 0 && hq % hk == 0, kOp, ": with enable_gqa the key and value heads (", hk,
                        ", ", hv, ") must be equal and divide the query heads (", hq, ")");
      g = hq / hk;
    }
  }

  const DType cd = compute_dtype(ScaledDotProductAttentionBackward::schema_v1, q->dtype);
  const DType kd = acc_dtype(cd);  // half types run in float32
  auto qc = prepare(q, kd), kc = prepare(k, kd), vc = prepare(v, kd);
  auto mc = attn_mask ? additive_mask(attn_mask, kd) : nullptr;
  const Plan p = make_plan(qc, kc, vc, mc, g);
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(E));

  TensorImplPtr keep;
  const double keep_scale = dropout_p >= 1.0 ? 0.0 : 1.0 / (1.0 - dropout_p);
  if (dropout_p > 0.0) {
    keep = empty(with(p.batch, {p.L, p.S}), DType::Bool);
    if (dropout_p >= 1.0) std::memset(keep->raw(), 0, size_t(keep->numel()));
    else bernoulli_fill(keep->data<bool>(), keep->numel(), 1.0 - dropout_p);
  }
  auto out = empty(with(p.batch, {p.L, p.Ev}), kd);
  auto lse = empty(with(p.batch, {p.L}), kd);
  LUCID_DISPATCH_FLOAT(kd, kOp, [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      kernels::attention_forward<T>(args_of<T>(p, sc, is_causal, keep, keep_scale), out->data<T>(), lse->data<T>());
  });

  // The result in q's batch shape (the split heads merged back) and dtype.
  Shape res_shape = p.batch;
  if (g > 1) {
    const int64_t gsz = res_shape.back();
    res_shape.pop_back();
    res_shape.back() *= gsz;
  }
  res_shape = with(res_shape, {p.L, p.Ev});
  auto res = make_view(out, res_shape, contiguous_strides(res_shape), out->offset);
  res = cast_raw(res, q->dtype);

  const bool mask_grad = attn_mask && attn_mask->dtype != DType::Bool && attn_mask->requires_grad;
  const TensorImplPtr mask_in = mask_grad ? attn_mask : nullptr;
  if (any_requires_grad({&q, &k, &v, &mask_in})) {
    auto node = std::make_shared<ScaledDotProductAttentionBackward>();
    node->set_inputs({q, k, v, mask_in});
    node->save(0, qc), node->save(1, kc), node->save(2, vc), node->save(3, mc);
    // A detached alias: saving the result itself would make res -> grad_fn -> res a cycle.
    node->saved_out_ = detach(out);
    node->out_version_ = out->version();
    node->saved_lse_ = lse, node->saved_keep_ = keep;
    node->scale_ = sc, node->keep_scale_ = keep_scale;
    node->causal_ = is_causal, node->gqa_ = g > 1;
    const TensorImplPtr* ins[4] = {&q, &k, &v, &attn_mask};
    for (int i = 0; i < 4; ++i)
      if (*ins[i]) node->in_shapes_[i] = (*ins[i])->shape, node->in_dtypes_[i] = (*ins[i])->dtype;
    attach_node(res, std::move(node));
  }
  return res;
}

std::vector<TensorImplPtr> ScaledDotProductAttentionBackward::apply(const TensorImplPtr& grad_out) {
  if (saved_out_->version() != out_version_) throw LucidError(modified_saved_message(*saved_out_, this, out_version_));
  const TensorImplPtr &q = saved_[0], &k = saved_[1], &v = saved_[2], &m = saved_[3];
  const int64_t g = gqa_ ? q->shape[q->ndim() - 3] / k->shape[k->ndim() - 3] : 1;
  const Plan p = make_plan(q, k, v, m, g);
  const DType kd = q->dtype;
  auto go = contiguous_raw(cast_raw(grad_out, kd));
  LUCID_CHECK_SHAPE(go->numel() == p.heads * p.L * p.Ev, name(), ": grad_out of shape ", shape_str(grad_out->shape),
                    " does not match the output's ", p.heads * p.L * p.Ev, " elements");
  const bool want_mask = needs_input_grad(3) && m;
  auto dq = empty(with(p.batch, {p.L, p.E}), kd);
  auto dk = empty(with(p.batch, {p.S, p.E}), kd);
  auto dv = empty(with(p.batch, {p.S, p.Ev}), kd);
  auto dm = want_mask ? empty(with(p.batch, {p.L, p.S}), kd) : nullptr;
  LUCID_DISPATCH_FLOAT(kd, name(), [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      kernels::AttnGrads<T> gr;
      gr.dq = dq->data<T>(), gr.dk = dk->data<T>(), gr.dv = dv->data<T>();
      gr.dmask = dm ? dm->data<T>() : nullptr;
      kernels::attention_backward<T>(args_of<T>(p, scale_, causal_, saved_keep_, keep_scale_),
                                     saved_out_->data<T>(), saved_lse_->data<T>(), go->data<T>(), gr);
    }
  });
  std::vector<TensorImplPtr> grads(4);
  if (needs_input_grad(0)) grads[0] = grad_back(dq, p.q->shape, in_shapes_[0], in_dtypes_[0]);
  if (needs_input_grad(1)) grads[1] = grad_back(dk, p.k->shape, in_shapes_[1], in_dtypes_[1]);
  if (needs_input_grad(2)) grads[2] = grad_back(dv, p.v->shape, in_shapes_[2], in_dtypes_[2]);
  if (want_mask) grads[3] = grad_back(dm, p.m->shape, in_shapes_[3], in_dtypes_[3]);
  return grads;
}

std::vector<TensorImplPtr> ScaledDotProductAttentionBackward::apply_graph(const TensorImplPtr& grad_out) {
  if (saved_out_->version() != out_version_) throw LucidError(modified_saved_message(*saved_out_, this, out_version_));
  const TensorImplPtr &qs = saved_[0], &ks = saved_[1], &vs = saved_[2], &ms = saved_[3];
  const DType kd = qs->dtype;
  const int64_t E = qs->shape.back(), L = qs->shape[qs->ndim() - 2], S = ks->shape[ks->ndim() - 2];
  const int64_t g = gqa_ ? qs->shape[qs->ndim() - 3] / ks->shape[ks->ndim() - 3] : 1;
  auto q = saved_input_graph(qs, next_edges[0], in_shapes_[0], in_dtypes_[0]);
  auto k = saved_input_graph(ks, next_edges[1], in_shapes_[1], in_dtypes_[1]);
  auto v = saved_input_graph(vs, next_edges[2], in_shapes_[2], in_dtypes_[2]);
  auto m = ms && next_edges.size() > 3 ? saved_input_graph(ms, next_edges[3], in_shapes_[3], in_dtypes_[3]) : ms;
  // GQA: kv head h serves query heads h * g .. h * g + g - 1 (repeat each head g times).
  auto repeat_heads = [g](const TensorImplPtr& t) {
    if (g == 1) return t;
    Shape rep = t->shape;
    rep.insert(rep.end() - 2, g);
    Shape out = t->shape;
    out[out.size() - 3] *= g;
    return reshape(expand(unsqueeze(t, t->ndim() - 2), rep), out);
  };
  auto unrepeat = [g](const TensorImplPtr& t) {
    if (g == 1) return t;
    Shape split = t->shape;
    split[split.size() - 3] /= g;
    split.insert(split.end() - 2, g);
    return sum(reshape(t, split), {int64_t(split.size()) - 3}, false);
  };
  auto kr = repeat_heads(k), vr = repeat_heads(v);
  auto scale = scalar_tensor(E == 0 ? 1.0 : scale_, kd);
  auto s = mul(matmul(q, transpose(kr, -1, -2)), scale);
  if (m) s = add(s, m);
  if (causal_) {  // key j <= query i (top-left aligned): a constant additive mask
    auto cm = empty({L, S}, kd);  // kd is float32 or float64
    auto fill = [&]<class T>(T* c) {
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < S; ++j) c[i * S + j] = j <= i ? T(0) : -std::numeric_limits<T>::infinity();
    };
    if (kd == DType::Float64) fill(cm->data<double>());
    else fill(cm->data<float>());
    s = add(s, cm);
  }
  // A row with no attended key has zero probabilities (and gradients), as the forward kernel.
  TensorImplPtr dead;
  {
    NoGradGuard no_grad;
    auto d = compare(amax(s, {-1}, /*keepdim=*/true), scalar_tensor(-std::numeric_limits<double>::infinity(), kd),
                     CompareOp::Eq);
    if (item_as_double(sum(d, {}, false), name()) > 0) dead = d;
  }
  auto zero = scalar_tensor(0.0, kd);
  if (dead) s = where(dead, zero, s);
  auto p = softmax(s, -1);
  if (dead) p = where(dead, zero, p);
  TensorImplPtr keep;
  if (saved_keep_) {
    NoGradGuard no_grad;
    keep = mul(reshape(cast_raw(saved_keep_, kd), p->shape), scalar_tensor(keep_scale_, kd));
  }
  auto pd = keep ? mul(p, keep) : p;
  auto go = reshape(to(grad_out, kd, false), with(Shape(p->shape.begin(), p->shape.end() - 2), {L, vs->shape.back()}));
  std::vector<TensorImplPtr> grads(4);
  if (needs_input_grad(2)) grads[2] = grad_for_graph(unrepeat(matmul(transpose(pd, -1, -2), go)), in_shapes_[2],
                                                     in_dtypes_[2]);
  const bool want_mask = needs_input_grad(3) && ms;
  if (needs_input_grad(0) || needs_input_grad(1) || want_mask) {
    auto dp = matmul(go, transpose(vr, -1, -2));
    if (keep) dp = mul(dp, keep);
    auto ds = mul(p, sub(dp, sum(mul(dp, p), {-1}, /*keepdim=*/true)));
    if (needs_input_grad(0)) grads[0] = grad_for_graph(mul(matmul(ds, kr), scale), in_shapes_[0], in_dtypes_[0]);
    if (needs_input_grad(1))
      grads[1] = grad_for_graph(unrepeat(mul(matmul(transpose(ds, -1, -2), q), scale)), in_shapes_[1], in_dtypes_[1]);
    if (want_mask) {
      // The mask broadcast into (batch, L, S), possibly after head splitting: sum back to its shape.
      grads[3] = grad_for_graph(ds, in_shapes_[3], in_dtypes_[3]);
    }
  }
  return grads;
}

}  // namespace lucid
