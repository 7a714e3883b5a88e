// The fused attention op from Python: `_C._scaled_dot_product_attention` (wrapped with PyTorch's
// signature in pylucid/nn/_functional_attention.py) and its backward node class, whose saved
// state reads as read-only attributes. Large calls run with the GIL released.
#include "bindings/common.h"
#include "ops/attention.h"

namespace lucid::bindings {

namespace {

using N = ScaledDotProductAttentionBackward;

}  // namespace

LUCID_BINDING(nn_attention, 22) {
  m.def("_scaled_dot_product_attention",
        [](const TensorImplPtr& q, const TensorImplPtr& k, const TensorImplPtr& v, const OptTensor& mask,
           double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
          const int64_t work = q->numel() * (k->ndim() >= 2 ? k->shape[k->ndim() - 2] : 1);
          return maybe_nogil(work, [&] {
            return scaled_dot_product_attention(q, k, v, opt(mask), dropout_p, is_causal, scale, enable_gqa);
          });
        },
        py::arg("query").none(false), py::arg("key").none(false), py::arg("value").none(false),
        py::arg("attn_mask").none(true), py::arg("dropout_p"), py::arg("is_causal"), py::arg("scale").none(true),
        py::arg("enable_gqa"));

  py::class_<N, Node, std::shared_ptr<N>> c(
      m, "ScaledDotProductAttentionBackward",
      "Backward of scaled_dot_product_attention: recomputes the attention probabilities block by block from "
      "the saved query, key, value, mask and per-row logsumexp, and returns the gradients of query, key, "
      "value and (when floating and requiring grad) attn_mask.");
  const OpSchema& s = N::schema_v1;
  std::string sdoc = str("The registered schema: ", s.name, ", version ", s.version, ", ",
                         amp_policy_name(s.amp_policy), s.produces_grad ? ", produces_grad." : ".");
  // Documented on the getter: CPython 3.11 drops the docstring of pybind11's static property.
  c.def_property_readonly_static("schema_v1", py::cpp_function([](py::object) { return N::schema_v1; },
                                                               py::doc(sdoc.c_str())));
  c.def_property_readonly("scale", [](const N& n) { return n.scale_; },
                          "The factor the scores q k^T were multiplied by, a float (1/sqrt(E) by default).")
      .def_property_readonly("is_causal", [](const N& n) { return n.causal_; },
                             "Whether query i attended only keys j <= i.")
      .def_property_readonly("dropout_scale", [](const N& n) { return n.keep_scale_; },
                             "1 / (1 - dropout_p), the factor applied to kept probabilities (0.0 when dropout_p "
                             "is 1).")
      .def_property_readonly("saved_logsumexp", [](const N& n) { return n.saved_lse_; },
                             "The logsumexp of each row of scores, a Tensor of shape (*batch, L) in float32 "
                             "(float64 for float64 inputs; -inf for a row with no attended key); None once freed.")
      .def_property_readonly("saved_dropout_mask", [](const N& n) { return n.saved_keep_; },
                             "Which probabilities dropout kept, a bool Tensor of shape (*batch, L, S); None "
                             "without dropout or once freed.");
}

}  // namespace lucid::bindings
