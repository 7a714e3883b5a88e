// Convolution, padding and pooling from Python: `_C._conv`, `_C._conv_transpose`, `_C._pad`,
// `_C._pool` and `_C._adaptive_pool` (wrapped with PyTorch's signatures in
// pylucid/nn/_functional_conv.py and _functional_pool.py). Size arguments arrive as an int or a tuple of
// `dims` ints and are parsed here, so a small layer's call costs one crossing.
#include "bindings/common.h"
#include "ops/conv.h"
#include "ops/pad.h"
#include "ops/pool.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;

// An int or a sequence of `dims` ints, as {H, W} (H = `fill` for a 1-d op).
std::array<int64_t, 2> pair_arg(py::handle h, int dims, int64_t fill, const char* what, const char* op) {
  auto one = [&](py::handle v) -> int64_t {
    if (PyBool_Check(v.ptr()) || !(PyLong_Check(v.ptr()) || py::hasattr(v, "__index__")))
      throw DtypeMismatch(str(op, ": ", what, " must be an int or a tuple of ", dims, " ints, got ", type_name(v)));
    return v.cast<int64_t>();
  };
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    LUCID_CHECK_SHAPE(int(s.size()) == dims || (dims > 1 && s.size() == 1), op, ": ", what, " must be an int or a tuple of ",
                      dims, " ints, got ", s.size(), " values");
    if (s.size() == 1) {
      int64_t v = one(s[0]);
      return {dims == 1 ? fill : v, v};
    }
    return dims == 1 ? std::array<int64_t, 2>{fill, one(s[0])} : std::array<int64_t, 2>{one(s[0]), one(s[1])};
  }
  int64_t v = one(h);
  return {dims == 1 ? fill : v, v};
}

int dims_of(int dims, const char* op) {
  LUCID_CHECK(dims == 1 || dims == 2, op, ": dims must be 1 or 2, got ", dims);
  return dims;
}

}  // namespace

LUCID_BINDING(nn_conv, 22) {
  m.def(
      "_conv",
      [](T x, T weight, const OptTensor& bias, py::handle stride, py::handle padding, py::handle dilation,
         py::handle groups, int dims, const std::string& op) {
        const char* name = op.c_str();
        ConvSpec s;
        s.dims = dims_of(dims, name);
        s.stride = pair_arg(stride, dims, 1, "stride", name);
        s.dilation = pair_arg(dilation, dims, 1, "dilation", name);
        s.groups = int_arg(groups, name, "groups");
        if (py::isinstance<py::str>(padding)) {
          std::string mode = padding.cast<std::string>();
          LUCID_CHECK(mode == "same" || mode == "valid", name, ": invalid padding string '", mode,
                      "', expected 'same' or 'valid'");
          if (mode == "same") {
            LUCID_CHECK(s.stride[0] == 1 && s.stride[1] == 1, name,
                        ": padding='same' is not supported for strided convolutions");
            // Total padding d * (k - 1), the odd one extra on the high side (PyTorch's split).
            LUCID_CHECK_SHAPE(weight->ndim() == dims + 2, name, ": expected a ", dims + 2,
                              "-D weight, but got weight of shape ", shape_str(weight->shape));
            for (int i = 2 - dims; i < 2; ++i) {
              const int64_t k = weight->shape[2 + i - (2 - dims)];
              const int64_t total = s.dilation[i] * (k - 1);
              s.pad_lo[i] = total / 2, s.pad_hi[i] = total - total / 2;
            }
          }
        } else {
          s.pad_lo = s.pad_hi = pair_arg(padding, dims, 0, "padding", name);
        }
        return maybe_nogil(x->numel() + weight->numel(), [&] { return convolution(x, weight, opt(bias), s, name); });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("groups"), py::arg("dims"), py::arg("op"));
  m.def(
      "_conv_transpose",
      [](T x, T weight, const OptTensor& bias, py::handle stride, py::handle padding, py::handle output_padding,
         py::handle groups, py::handle dilation, int dims, const std::string& op) {
        const char* name = op.c_str();
        ConvSpec s;
        s.dims = dims_of(dims, name);
        s.transposed = true;
        s.stride = pair_arg(stride, dims, 1, "stride", name);
        s.dilation = pair_arg(dilation, dims, 1, "dilation", name);
        s.output_padding = pair_arg(output_padding, dims, 0, "output_padding", name);
        s.groups = int_arg(groups, name, "groups");
        s.pad_lo = s.pad_hi = pair_arg(padding, dims, 0, "padding", name);
        return maybe_nogil(x->numel() + weight->numel(), [&] { return convolution(x, weight, opt(bias), s, name); });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("output_padding"), py::arg("groups"), py::arg("dilation"), py::arg("dims"), py::arg("op"));

  m.def(
      "_pad",
      [](T x, py::handle pads, const std::string& mode, double value, const std::string& op) {
        Shape p = shape_arg(pads, op.c_str());
        return maybe_nogil(x->numel(), [&] { return pad(x, p, mode, value, op.c_str()); });
      },
      py::arg("input"), py::arg("pad"), py::arg("mode"), py::arg("value"), py::arg("op"));

  m.def(
      "_pool",
      [](T x, const std::string& kind, py::handle kernel, py::handle stride, py::handle padding, py::handle dilation,
         bool ceil_mode, bool count_include_pad, py::handle divisor_override, int dims, const std::string& op) {
        const char* name = op.c_str();
        LUCID_CHECK(kind == "max" || kind == "avg", name, ": unknown pooling kind '", kind, "'");
        PoolSpec s;
        s.dims = dims_of(dims, name);
        s.kind = kind == "max" ? PoolKind::Max : PoolKind::Avg;
        s.kernel = pair_arg(kernel, dims, 1, "kernel_size", name);
        s.stride = pair_arg(stride, dims, 1, "stride", name);
        s.padding = pair_arg(padding, dims, 0, "padding", name);
        s.dilation = pair_arg(dilation, dims, 1, "dilation", name);
        s.ceil_mode = ceil_mode;
        s.count_include_pad = count_include_pad;
        if (!divisor_override.is_none()) {
          s.divisor_override = int_arg(divisor_override, name, "divisor_override");
          LUCID_CHECK(s.divisor_override != 0, name, ": divisor must be not zero");
        }
        auto r = maybe_nogil(x->numel(), [&] { return pool(x, s, name); });
        return py::make_tuple(r[0], r[1] ? py::cast(r[1]) : py::none());
      },
      py::arg("input"), py::arg("kind"), py::arg("kernel_size"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("ceil_mode"), py::arg("count_include_pad"), py::arg("divisor_override"),
      py::arg("dims"), py::arg("op"));
  m.def(
      "_adaptive_pool",
      [](T x, const std::string& kind, py::handle output_size, int dims, const std::string& op) {
        const char* name = op.c_str();
        LUCID_CHECK(kind == "max" || kind == "avg", name, ": unknown pooling kind '", kind, "'");
        PoolSpec s;
        s.dims = dims_of(dims, name);
        s.kind = kind == "max" ? PoolKind::AdaptiveMax : PoolKind::AdaptiveAvg;
        // An int, or a tuple of ints where None keeps that dim's input size (-1).
        auto one = [&](py::handle v) -> int64_t {
          if (v.is_none()) return -1;
          const int64_t n = int_arg(v, name, "output_size");
          LUCID_CHECK(n >= 0, name, ": output_size must be non-negative, got ", n);
          return n;
        };
        if (py::isinstance<py::tuple>(output_size) || py::isinstance<py::list>(output_size)) {
          py::sequence q = py::reinterpret_borrow<py::sequence>(output_size);
          LUCID_CHECK_SHAPE(int(q.size()) == dims, name, ": output_size must be an int or a tuple of ", dims,
                            " ints, got ", q.size(), " values");
          s.output_size = dims == 1 ? std::array<int64_t, 2>{1, one(q[0])} : std::array<int64_t, 2>{one(q[0]), one(q[1])};
        } else {
          LUCID_CHECK(!output_size.is_none(), name, ": output_size must be an int or a tuple of ", dims,
                      " ints, got None");
          const int64_t v = one(output_size);
          s.output_size = {dims == 1 ? 1 : v, v};
        }
        auto r = maybe_nogil(x->numel(), [&] { return pool(x, s, name); });
        return py::make_tuple(r[0], r[1] ? py::cast(r[1]) : py::none());
      },
      py::arg("input"), py::arg("kind"), py::arg("output_size"), py::arg("dims"), py::arg("op"));

  py::class_<PoolBackward, Node, std::shared_ptr<PoolBackward>> plb(
      m, "PoolBackward",
      "Backward node of max/avg/adaptive pooling: the adjoint of the pooling's linear map (a scatter-add at the "
      "saved argmax indices, or the window averages spread back); its name() names the pooling "
      "(MaxPool2DWithIndicesBackward, AvgPool2DBackward, ...).");
  const OpSchema& plsch = PoolBackward::schema_v1;
  std::string pldoc = str("The registered schema: ", plsch.name, ", version ", plsch.version, ", ",
                          amp_policy_name(plsch.amp_policy), ".");
  plb.def_property_readonly_static(
      "schema_v1", py::cpp_function([](py::object) { return PoolBackward::schema_v1; }, py::doc(pldoc.c_str())));

  py::class_<PadBackward, Node, std::shared_ptr<PadBackward>> pb(
      m, "PadBackward", "Backward node of pad: scatter-adds the gradient back through the padding's index maps.");
  const OpSchema& psch = PadBackward::schema_v1;
  std::string pdoc = str("The registered schema: ", psch.name, ", version ", psch.version, ", ",
                         amp_policy_name(psch.amp_policy), ".");
  pb.def_property_readonly_static(
      "schema_v1", py::cpp_function([](py::object) { return PadBackward::schema_v1; }, py::doc(pdoc.c_str())));

  py::class_<ConvolutionBackward, Node, std::shared_ptr<ConvolutionBackward>> c(
      m, "ConvolutionBackward",
      "Backward node of the convolutions (conv1d/conv2d and their transposes): saves input and weight; "
      "gradients for input, weight and bias come from one GEMM per group over the batch.");
  const OpSchema& sch = ConvolutionBackward::schema_v1;
  std::string sdoc = str("The registered schema: ", sch.name, ", version ", sch.version, ", ",
                         amp_policy_name(sch.amp_policy), ".");
  c.def_property_readonly_static(
      "schema_v1", py::cpp_function([](py::object) { return ConvolutionBackward::schema_v1; }, py::doc(sdoc.c_str())));
  c.def_property_readonly("transposed", [](const ConvolutionBackward& n) { return n.spec_.transposed; },
                          "True for conv_transpose1d/conv_transpose2d.")
      .def_property_readonly("groups", [](const ConvolutionBackward& n) { return n.spec_.groups; },
                             "The number of channel groups.")
      .def_property_readonly(
          "stride",
          [](const ConvolutionBackward& n) -> py::tuple {
            if (n.spec_.dims == 1) return py::make_tuple(n.spec_.stride[1]);
            return py::make_tuple(n.spec_.stride[0], n.spec_.stride[1]);
          },
          "The stride per spatial dim, a tuple.");
}

}  // namespace lucid::bindings
