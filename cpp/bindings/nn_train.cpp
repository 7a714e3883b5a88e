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

// The node class with its static property schema_v1, documented on the getter: CPython 3.11 drops
// the docstring given to a property subclass without an instance dict (pybind11's static
// property), so help() and the docstring test read the getter's.
template <class N>
py::class_<N, Node, std::shared_ptr<N>> node_class(py::module_& m, const char* name, const char* doc) {
  py::class_<N, Node, std::shared_ptr<N>> c(m, name, doc);
  const OpSchema& s = N::schema_v1;
  std::string sdoc = str("The registered schema: ", s.name, ", version ", s.version, ", ",
                         amp_policy_name(s.amp_policy), s.produces_grad ? ", produces_grad." : ".");
  c.def_property_readonly_static("schema_v1",
                                 py::cpp_function([](py::object) { return N::schema_v1; }, py::doc(sdoc.c_str())));
  return c;
}

template <class N>
void loss_node(py::class_<N, Node, std::shared_ptr<N>>& c) {
  c.def_property_readonly("reduction", [](const N& n) { return reduction_name(n.reduction_); },
                          "The loss's reduction, 'mean', 'sum' or 'none'; for 'mean' the backward divides the "
                          "incoming gradient by the mean's divisor.");
}

template <bool Log>
void softmax_node(py::module_& m, const char* name, const char* doc) {
  using N = SoftmaxBackwardT<Log>;
  node_class<N>(m, name, doc)
      .def_property_readonly("dim", [](const N& n) { return n.dim_; },
                             "The dim the op normalised over, wrapped to be non-negative.")
      .def_property_readonly("saved_result", [](const N& n) { return n.saved_[0]; },
                             Log ? "The saved output log_softmax(x), a detached alias of the result (same storage, "
                                   "shape, dtype and version counter, so modifying the result in place makes backward "
                                   "raise); None once freed."
                                 : "The saved output softmax(x), a detached alias of the result (same storage, shape, "
                                   "dtype and version counter, so modifying the result in place makes backward raise); "
                                   "None once freed.");
}

}  // namespace

LUCID_BINDING(nn_train, 21) {
  // ---- softmax / log_softmax ----
  m.def("_softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return softmax(x, dim); }); },
        py::arg("input").none(false), py::arg("dim"));
  m.def("_log_softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return log_softmax(x, dim); }); },
        py::arg("input").none(false), py::arg("dim"));
  def_method("softmax", [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return softmax(x, dim); }); },
             py::arg("dim"),
             py::doc("exp(x) / sum(exp(x)) along dim, computed stably (each row's max subtracted first); floating "
                     "input, same shape. Float32 for half inputs under autocast; differentiable (SoftmaxBackward)."));
  def_method("log_softmax",
             [](T x, int64_t dim) { return maybe_nogil(x->numel(), [&] { return log_softmax(x, dim); }); },
             py::arg("dim"),
             py::doc("x - logsumexp(x) along dim, computed stably; floating input, same shape. Float32 for half "
                     "inputs under autocast; differentiable (LogSoftmaxBackward)."));

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
  ce.def_property_readonly("saved_lse", [](const CrossEntropyBackward& n) { return n.saved_lse_; },
                           "The logsumexp over classes at each position, a flat Tensor of N * d1 * ... elements "
                           "(1 when unbatched) in float32 (float64 for float64 inputs); None once freed.")
      .def_property_readonly("ignore_index", [](const CrossEntropyBackward& n) { return n.ignore_index_; },
                             "The target class that contributes no loss and gets no gradient (default -100).")
      .def_property_readonly("label_smoothing", [](const CrossEntropyBackward& n) { return n.label_smoothing_; },
                             "The label smoothing in [0, 1] the loss was called with, a float.");
  auto nll = node_class<NllLossBackward>(
      m, "NllLossBackward", "Backward of nll_loss: -weight[target] at each target class, 0 elsewhere.");
  loss_node(nll);
  nll.def_property_readonly("ignore_index", [](const NllLossBackward& n) { return n.ignore_index_; },
                            "The target class that contributes no loss and gets no gradient (default -100).");
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
      .def_property_readonly("num_weights", [](const EmbeddingBackward& n) { return n.num_weights_; },
                             "Rows of the weight (num_embeddings), the first dim of the gradient it builds.")
      .def_property_readonly("padding_idx", [](const EmbeddingBackward& n) -> py::object {
        return n.padding_idx_ < 0 ? py::none() : py::cast(n.padding_idx_);
      }, "The weight row that gets no gradient, wrapped to be non-negative; None when there is none.")
      .def_property_readonly("saved_indices", [](const EmbeddingBackward& n) { return n.saved_[0]; },
                             "The indices, a contiguous int64 Tensor of the input's shape (the input itself when "
                             "already contiguous, so modifying it in place makes backward raise); None once freed.");
  node_class<DropoutBackward>(m, "DropoutBackward",
                              "Backward of dropout: the gradient times the saved mask and `scale` = 1 / (1 - p).")
      .def_property_readonly("scale", [](const DropoutBackward& n) { return n.scale_; },
                             "The factor 1 / (1 - p) applied to kept elements, a float (0.0 when p == 1).")
      .def_property_readonly("saved_mask", [](const DropoutBackward& n) { return n.saved_[0]; },
                             "Which elements were kept, a bool Tensor of the input's shape (True = kept); None once "
                             "freed.");
}

}  // namespace lucid::bindings
