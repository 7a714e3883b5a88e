// The training ops from Python: softmax / log_softmax (also Tensor methods), the losses,
// embedding and dropout as `_C._<name>` functions (wrapped with PyTorch's signatures in
// pylucid/nn/_functional_train.py), and their backward node classes, whose saved state reads as
// read-only attributes. Large calls run with the GIL released.
#include "bindings/common.h"
#include "ops/dropout.h"
#include "ops/embedding.h"
#include "ops/loss.h"
#include "ops/softmax.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
  }
  return "?";
}

template <class N>
py::class_<N, Node, std::shared_ptr<N>> node_class(py::module_& m, const char* name, const char* doc) {
  py::class_<N, Node, std::shared_ptr<N>> c(m, name, doc);
  c.def_property_readonly_static("schema_v1", [](py::object) { return N::schema_v1; });
  return c;
}

template <class N>
void loss_node(py::class_<N, Node, std::shared_ptr<N>>& c) {
  c.def_property_readonly("reduction", [](const N& n) { return reduction_name(n.reduction_); });
}

template <bool Log>
void softmax_node(py::module_& m, const char* name, const char* doc) {
  using N = SoftmaxBackwardT<Log>;
  node_class<N>(m, name, doc)
      .def_property_readonly("dim", [](const N& n) { return n.dim_; })
      .def_property_readonly("saved_result", [](const N& n) { return n.saved_[0]; });
}

}  // namespace

LUCID_BINDING(nn_train, 21) {
  // ---- softmax / log_softmax ----
  m.def("_softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return softmax(x, dim); }); },
        py::arg("input").none(false), py::arg("dim"));
  m.def("_log_softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return log_softmax(x, dim); }); },
        py::arg("input").none(false), py::arg("dim"));
  def_method("softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return softmax(x, dim); }); },
             py::arg("dim"));
  def_method("log_softmax",
             [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return log_softmax(x, dim); }); },
             py::arg("dim"));

  // ---- losses (weight / pos_weight may be None) ----
  m.def("_cross_entropy", [](T x, T t, const OptTensor& w, int64_t ignore_index, const std::string& reduction,
                             double smoothing) {
    Reduction r = parse_reduction(reduction, "cross_entropy");
    return maybe_nogil(x->numel(), [&] { return cross_entropy(x, t, opt(w), ignore_index, r, smoothing); });
  }, py::arg("input").none(false), py::arg("target").none(false), py::arg("weight").none(true),
     py::arg("ignore_index"), py::arg("reduction"), py::arg("label_smoothing"));
  m.def("_nll_loss", [](T x, T t, const OptTensor& w, int64_t ignore_index, const std::string& reduction) {
    Reduction r = parse_reduction(reduction, "nll_loss");
    return maybe_nogil(x->numel(), [&] { return nll_loss(x, t, opt(w), ignore_index, r); });
  }, py::arg("input").none(false), py::arg("target").none(false), py::arg("weight").none(true),
     py::arg("ignore_index"), py::arg("reduction"));
  m.def("_mse_loss", [](T x, T t, const std::string& reduction) {
    Reduction r = parse_reduction(reduction, "mse_loss");
    return maybe_nogil(x->numel(), [&] { return mse_loss(x, t, r); });
  }, py::arg("input").none(false), py::arg("target").none(false), py::arg("reduction"));
  m.def("_l1_loss", [](T x, T t, const std::string& reduction) {
    Reduction r = parse_reduction(reduction, "l1_loss");
    return maybe_nogil(x->numel(), [&] { return l1_loss(x, t, r); });
  }, py::arg("input").none(false), py::arg("target").none(false), py::arg("reduction"));
  m.def("_binary_cross_entropy_with_logits", [](T x, T t, const OptTensor& w, const std::string& reduction,
                                                 const OptTensor& pw) {
    Reduction r = parse_reduction(reduction, "binary_cross_entropy_with_logits");
    return maybe_nogil(x->numel(), [&] { return binary_cross_entropy_with_logits(x, t, opt(w), r, opt(pw)); });
  }, py::arg("input").none(false), py::arg("target").none(false), py::arg("weight").none(true),
     py::arg("reduction"), py::arg("pos_weight").none(true));

  // ---- embedding, dropout ----
  m.def("_embedding", [](T index, T weight, std::optional<int64_t> padding_idx) {
    return maybe_nogil(index->numel() * (weight->ndim() == 2 ? weight->shape[1] : 1),
                       [&] { return embedding(index, weight, padding_idx); });
  }, py::arg("input").none(false), py::arg("weight").none(false), py::arg("padding_idx").none(true));
  m.def("_dropout", [](T x, double p, bool training) {
    return maybe_nogil(x->numel(), [&] { return dropout(x, p, training); });
  }, py::arg("input").none(false), py::arg("p"), py::arg("training"));

  // ---- backward nodes ----
  softmax_node<false>(m, "SoftmaxBackward",
                      "Backward of softmax: dx = y * (g - sum(g * y)) along `dim`, from the saved output.");
  softmax_node<true>(m, "LogSoftmaxBackward",
                     "Backward of log_softmax: dx = g - exp(y) * sum(g) along `dim`, from the saved output.");
  auto ce = node_class<CrossEntropyBackward>(
      m, "CrossEntropyBackward",
      "Backward of cross_entropy: (softmax - smoothed onehot) * weight, from the saved input and its "
      "per-position logsumexp (`saved_lse`).");
  loss_node(ce);
  ce.def_property_readonly("saved_lse", [](const CrossEntropyBackward& n) { return n.saved_lse_; })
      .def_property_readonly("ignore_index", [](const CrossEntropyBackward& n) { return n.ignore_index_; })
      .def_property_readonly("label_smoothing", [](const CrossEntropyBackward& n) { return n.label_smoothing_; });
  auto nll = node_class<NllLossBackward>(
      m, "NllLossBackward", "Backward of nll_loss: -weight[target] at each target class, 0 elsewhere.");
  loss_node(nll);
  nll.def_property_readonly("ignore_index", [](const NllLossBackward& n) { return n.ignore_index_; });
  auto mse = node_class<MseLossBackward>(
      m, "MseLossBackward", "Backward of mse_loss: 2 (input - target) for the input, its negative for the target.");
  loss_node(mse);
  auto l1 = node_class<L1LossBackward>(
      m, "L1LossBackward", "Backward of l1_loss: sign(input - target) (0 at equality), negated for the target.");
  loss_node(l1);
  auto bce = node_class<BinaryCrossEntropyWithLogitsBackward>(
      m, "BinaryCrossEntropyWithLogitsBackward",
      "Backward of binary_cross_entropy_with_logits for input, target, weight and pos_weight.");
  loss_node(bce);
  node_class<EmbeddingBackward>(
      m, "EmbeddingBackward",
      "Backward of embedding: scatter-adds the rows of the gradient into a dense gradient of the weight "
      "(the padding_idx row gets none).")
      .def_property_readonly("num_weights", [](const EmbeddingBackward& n) { return n.num_weights_; })
      .def_property_readonly("padding_idx", [](const EmbeddingBackward& n) -> py::object {
        return n.padding_idx_ < 0 ? py::none() : py::cast(n.padding_idx_);
      })
      .def_property_readonly("saved_indices", [](const EmbeddingBackward& n) { return n.saved_[0]; });
  node_class<DropoutBackward>(m, "DropoutBackward",
                              "Backward of dropout: the gradient times the saved mask and `scale` = 1 / (1 - p).")
      .def_property_readonly("scale", [](const DropoutBackward& n) { return n.scale_; })
      .def_property_readonly("saved_mask", [](const DropoutBackward& n) { return n.saved_[0]; });
}

}  // namespace lucid::bindings
