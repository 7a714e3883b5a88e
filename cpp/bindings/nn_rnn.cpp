// The recurrent layers from Python: _rnn_layer (one layer and direction over a sequence, the
// op behind pylucid.nn.RNN/LSTM/GRU and their cells) and the RnnBackward node.
#include "bindings/common.h"
#include "ops/rnn.h"

namespace lucid::bindings {

LUCID_BINDING(nn_rnn, 26) {
  m.def(
      "_rnn_layer",
      [](const std::string& mode, const TensorImplPtr& x, const TensorImplPtr& h0, const OptTensor& c0,
         const TensorImplPtr& w_ih, const TensorImplPtr& w_hh, const OptTensor& b_ih, const OptTensor& b_hh,
         const OptTensor& w_hr, bool reverse, const std::string& layer) {
        return maybe_nogil(x && w_hh ? x->numel() * (w_hh->numel() + 1) : 0, [&] {
          return rnn_layer(mode, x, h0, opt(c0), w_ih, w_hh, opt(b_ih), opt(b_hh), opt(w_hr), reverse, layer);
        });
      },
      py::arg("mode"), py::arg("input"), py::arg("hx"), py::arg("cx"), py::arg("weight_ih"), py::arg("weight_hh"),
      py::arg("bias_ih"), py::arg("bias_hh"), py::arg("weight_hr"), py::arg("reverse"), py::arg("layer"),
      "One recurrent layer and direction over a time-major sequence; returns the packed "
      "[output (T, B, Hout) | c_n (B, H) for the LSTM] as one 1-D tensor.");

  py::class_<RnnBackward, Node, std::shared_ptr<RnnBackward>>(
      m, "RnnBackward",
      "Backward-through-time node of one recurrent layer and direction (RNN, LSTM, GRU): saves the "
      "inputs, the gate activations and cell states; one GEMM per step, weight gradients afterwards.");
}

}  // namespace lucid::bindings
