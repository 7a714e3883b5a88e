// The normalisation family from Python: the functional entry points behind
// pylucid.nn.functional.{rms_norm, group_rms_norm, layer_norm, batch_norm, group_norm} (every argument explicit: the
// defaults live in the Python signatures) and the backward node classes with their saved state.
#include "autograd/grad_mode.h"
#include "bindings/common.h"
#include "ops/batch_norm.h"
#include "ops/group_norm.h"
#include "ops/group_rms_norm.h"
#include "ops/layer_norm.h"
#include "ops/rms_norm.h"

namespace lucid::bindings {

namespace {

int64_t work_of(const TensorImplPtr& t) { return t ? t->numel() : 0; }

// node.apply(grad_out) from Python: run() checks the saved tensors' versions and that the
// graph was not freed, then calls the closed-form apply.
template <class NodeT>
py::tuple apply_from_python(NodeT& n, const TensorImplPtr& grad_out) {
  // The closed-form first-order values: the seed's apply records nothing (create_graph is the
  // engine's business).
  auto grads = maybe_nogil(work_of(grad_out), [&] {
    NoGradGuard no_grad;
    return n.run(grad_out);
  });
  py::list out;
  for (auto& g : grads) out.append(g ? py::cast(g) : py::none());
  return py::tuple(out);
}

// The static property schema_v1, documented on its getter: CPython 3.11 drops the docstring given to
// a property subclass without an instance dict (pybind11's static property), so help() and the
// docstring test read the getter's.
template <class NodeT, class Cls>
void def_schema_v1(Cls& c) {
  const OpSchema& s = NodeT::schema_v1;
  std::string doc = str("The registered schema: ", s.name, ", version ", s.version, ", ", amp_policy_name(s.amp_policy),
                        s.produces_grad ? ", produces_grad." : ".");
  c.def_property_readonly_static("schema_v1", py::cpp_function([](py::handle) { return NodeT::schema_v1; },
                                                               py::doc(doc.c_str())));
}

}  // namespace

LUCID_BINDING(nn_norm, 20) {
  m.def(
      "_rms_norm",
      [](const TensorImplPtr& x, py::handle normalized_shape, const OptTensor& weight, double eps,
         double partial_ratio) {
        Shape ns = shape_arg(normalized_shape, "rms_norm");
        return maybe_nogil(work_of(x), [&] { return rms_norm(x, ns, opt(weight), eps, partial_ratio); });
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight"), py::arg("eps"), py::arg("partial_ratio"));
  m.def(
      "_rms_norm_check",
      [](py::handle normalized_shape, double eps, double partial_ratio) {
        Shape ns = shape_arg(normalized_shape, "rms_norm");
        LUCID_CHECK_SHAPE(!ns.empty(), "rms_norm: normalized_shape must have at least one dim, got []");
        for (auto d : ns)
          LUCID_CHECK_SHAPE(d > 0, "rms_norm: dim must hold positive sizes, got ", shape_str(ns));
        check_eps("rms_norm", eps);
        return rms_norm_partial_k(numel_of(ns), partial_ratio);
      },
      py::arg("normalized_shape"), py::arg("eps"), py::arg("partial_ratio"),
      "Validates RMSNorm's arguments and returns k, the number of features feeding the RMS.");
  m.def(
      "_layer_norm",
      [](const TensorImplPtr& x, py::handle normalized_shape, const OptTensor& weight, const OptTensor& bias,
         double eps) {
        Shape ns = shape_arg(normalized_shape, "layer_norm");
        return maybe_nogil(work_of(x), [&] { return layer_norm(x, ns, opt(weight), opt(bias), eps); });
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight"), py::arg("bias"), py::arg("eps"));
  m.def(
      "_layer_norm_check",
      [](py::handle normalized_shape, double eps) {
        Shape ns = shape_arg(normalized_shape, "layer_norm");
        LUCID_CHECK_SHAPE(!ns.empty(), "layer_norm: normalized_shape must have at least one dim, got []");
        for (auto d : ns)
          LUCID_CHECK_SHAPE(d > 0, "layer_norm: normalized_shape must hold positive sizes, got ", shape_str(ns));
        check_eps("layer_norm", eps);
      },
      py::arg("normalized_shape"), py::arg("eps"));
  m.def(
      "_group_rms_norm",
      [](const TensorImplPtr& x, const TensorImplPtr& channel_groups, const OptTensor& weight, double eps) {
        return maybe_nogil(work_of(x), [&] { return group_rms_norm(x, channel_groups, opt(weight), eps); });
      },
      py::arg("input"), py::arg("channel_groups"), py::arg("weight"), py::arg("eps"));
  m.def(
      "_group_rms_norm_groups",
      [](const TensorImplPtr& channel_groups, double eps) {
        check_eps("group_rms_norm", eps);
        auto [ids, counts] = group_rms_norm_groups(channel_groups);
        return py::make_tuple(ids, counts);
      },
      py::arg("channel_groups"), py::arg("eps"));

  m.def(
      "_batch_norm",
      [](const TensorImplPtr& x, const OptTensor& running_mean, const OptTensor& running_var, const OptTensor& weight,
         const OptTensor& bias, bool training, double momentum, double eps) {
        return maybe_nogil(work_of(x), [&] {
          return batch_norm(x, opt(weight), opt(bias), opt(running_mean), opt(running_var), training, momentum, eps);
        });
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight"), py::arg("bias"),
      py::arg("training"), py::arg("momentum"), py::arg("eps"));
  m.def(
      "_group_norm",
      [](const TensorImplPtr& x, int64_t num_groups, const OptTensor& weight, const OptTensor& bias, double eps) {
        return maybe_nogil(work_of(x), [&] { return group_norm(x, num_groups, opt(weight), opt(bias), eps); });
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight"), py::arg("bias"), py::arg("eps"));

  py::class_<BatchNormBackward, Node, std::shared_ptr<BatchNormBackward>> bn(
      m, "BatchNormBackward",
      "Backward node of batch_norm: saves x, weight, the per-channel mean and reciprocal std (batch "
      "statistics in training, running statistics in eval); apply(grad_out) returns (dx, d_weight, d_bias).");
  def_schema_v1<BatchNormBackward>(bn);
  bn.def_property_readonly("saved_mean", [](const BatchNormBackward& n) { return n.saved_mean_; },
                           "Per-channel mean used to normalise, a Tensor of shape (C,); None once freed.")
      .def_property_readonly("saved_rstd", [](const BatchNormBackward& n) { return n.saved_rstd_; },
                             "Per-channel 1 / sqrt(var + eps), a Tensor of shape (C,); None once freed.")
      .def_property_readonly("training", [](const BatchNormBackward& n) { return n.training_; },
                             "Whether batch statistics were used (their gradient flows into dx).")
      .def_property_readonly("eps", [](const BatchNormBackward& n) { return n.eps_; },
                             "The eps added to the variance, a float.")
      .def("apply", &apply_from_python<BatchNormBackward>, py::arg("grad_out"),
           "(dx, d_weight, d_bias) for grad_out (None where not needed).");

  py::class_<GroupNormBackward, Node, std::shared_ptr<GroupNormBackward>> gn(
      m, "GroupNormBackward",
      "Backward node of group_norm (and of instance_norm without running statistics): saves x, weight, "
      "the mean and reciprocal std per (sample, group); apply(grad_out) returns (dx, d_weight, d_bias).");
  def_schema_v1<GroupNormBackward>(gn);
  gn.def_property_readonly("saved_mean", [](const GroupNormBackward& n) { return n.saved_mean_; },
                           "Mean per (sample, group), a Tensor of shape (N, G); None once freed.")
      .def_property_readonly("saved_rstd", [](const GroupNormBackward& n) { return n.saved_rstd_; },
                             "1 / sqrt(var + eps) per (sample, group), a Tensor of shape (N, G); None once freed.")
      .def_property_readonly("G", [](const GroupNormBackward& n) { return n.G_; }, "Number of groups.")
      .def_property_readonly("eps", [](const GroupNormBackward& n) { return n.eps_; },
                             "The eps added to the variance, a float.")
      .def("apply", &apply_from_python<GroupNormBackward>, py::arg("grad_out"),
           "(dx, d_weight, d_bias) for grad_out (None where not needed).");

  py::class_<RMSNormBackward, Node, std::shared_ptr<RMSNormBackward>> rms(
      m, "RMSNormBackward",
      "Backward node of rms_norm (RMSNorm and partial RMSNorm): saves x, gamma and the per-slice "
      "reciprocal RMS; apply(grad_out) returns (dx, d_gamma) in closed form.");
  def_schema_v1<RMSNormBackward>(rms);
  rms.def_property_readonly("saved_rstd", [](const RMSNormBackward& n) { return n.saved_rstd_; },
                            "Per-slice reciprocal RMS, a Tensor of shape (outer,) in float32 (float64 for float64 "
                            "inputs); None once freed.")
      .def_property_readonly("outer", [](const RMSNormBackward& n) { return n.outer_; },
                             "Product of the leading (not normalised) dims of x.")
      .def_property_readonly("N", [](const RMSNormBackward& n) { return n.N_; },
                             "Product of the normalised trailing dims of x.")
      .def_property_readonly("k", [](const RMSNormBackward& n) { return n.k_; },
                             "Number of leading features the RMS is taken over (N unless partial).")
      .def_property_readonly("eps", [](const RMSNormBackward& n) { return n.eps_; },
                             "The eps added to the mean square before the reciprocal square root, a float.")
      .def_static(
          "forward",
          [](const TensorImplPtr& x, const OptTensor& gamma, double eps) {
            return maybe_nogil(work_of(x), [&] { return RMSNormBackward::forward(x, opt(gamma), eps); });
          },
          py::arg("x"), py::arg("gamma"), py::arg("eps"),
          "Normalise x over its last gamma.ndim dims, apply gamma, and record the node when grad is on.")
      .def("apply", &apply_from_python<RMSNormBackward>, py::arg("grad_out"),
           "(dx, d_gamma) for grad_out, the gradient of the output (None where not needed).");

  py::class_<GroupRMSNormBackward, Node, std::shared_ptr<GroupRMSNormBackward>> grms(
      m, "GroupRMSNormBackward",
      "Backward node of group_rms_norm: saves x, gamma, the group ids and the reciprocal RMS per "
      "(row, group); apply(grad_out) returns (dx, d_gamma).");
  def_schema_v1<GroupRMSNormBackward>(grms);
  grms.def_property_readonly("saved_rstd", [](const GroupRMSNormBackward& n) { return n.saved_rstd_; },
                             "Reciprocal RMS per (row, group), a Tensor of shape (B, G) in float32 (float64 for "
                             "float64 inputs); None once freed.")
      .def_property_readonly("channel_groups", [](const GroupRMSNormBackward& n) { return n.groups_; },
                             "The validated group id of each channel, a contiguous int64 Tensor of shape (C,); "
                             "kept after backward (not freed with the saved tensors).")
      .def_property_readonly("n_channels", [](const GroupRMSNormBackward& n) { return n.counts_; },
                             "The channel count of each group, an int64 Tensor of shape (G,); kept after backward.")
      .def_property_readonly("B", [](const GroupRMSNormBackward& n) { return n.B_; },
                             "Rows of the input (its dim 0).")
      .def_property_readonly("C", [](const GroupRMSNormBackward& n) { return n.C_; },
                             "Channels of the input (its dim 1).")
      .def_property_readonly("S", [](const GroupRMSNormBackward& n) { return n.S_; },
                             "Spatial positions per channel (the product of the dims after C; 1 for (B, C)).")
      .def_property_readonly("G", [](const GroupRMSNormBackward& n) { return n.G_; },
                             "Number of channel groups (max group id + 1).")
      .def_property_readonly("eps", [](const GroupRMSNormBackward& n) { return n.eps_; },
                             "The eps added to each group's mean square before the reciprocal square root, a float.")
      .def("apply", &apply_from_python<GroupRMSNormBackward>, py::arg("grad_out"),
           "(dx, d_gamma) for grad_out (None where not needed).");

  py::class_<LayerNormBackward, Node, std::shared_ptr<LayerNormBackward>> ln(
      m, "LayerNormBackward",
      "Backward node of layer_norm: saves x, weight, the per-slice mean and reciprocal std; "
      "apply(grad_out) returns (dx, d_weight, d_bias).");
  def_schema_v1<LayerNormBackward>(ln);
  ln.def_property_readonly("saved_mean", [](const LayerNormBackward& n) { return n.saved_mean_; },
                           "Per-slice mean of x, a Tensor of shape (outer,) in float32 (float64 for float64 "
                           "inputs); None once freed.")
      .def_property_readonly("saved_rstd", [](const LayerNormBackward& n) { return n.saved_rstd_; },
                             "Per-slice reciprocal std 1 / sqrt(var + eps), a Tensor of shape (outer,) in float32 "
                             "(float64 for float64 inputs); None once freed.")
      .def_property_readonly("outer", [](const LayerNormBackward& n) { return n.outer_; },
                             "Product of the leading (not normalised) dims of x.")
      .def_property_readonly("N", [](const LayerNormBackward& n) { return n.N_; },
                             "Product of the normalised trailing dims of x.")
      .def_property_readonly("eps", [](const LayerNormBackward& n) { return n.eps_; },
                             "The eps added to the variance before the reciprocal square root, a float.")
      .def("apply", &apply_from_python<LayerNormBackward>, py::arg("grad_out"),
           "(dx, d_weight, d_bias) for grad_out (None where not needed).");
}

}  // namespace lucid::bindings
