// One layer and direction of a recurrent network (RNN tanh/relu, LSTM with optional projection,
// GRU) over a whole sequence, as one op with one backward-through-time node. Time-major x (T, B, I).
// Forward: one GEMM projects the whole sequence (x W_ih^T + biases) into the gate buffer; then
// per step one GEMM adds h_prev W_hh^T and a fused kernel applies the gate nonlinearities
// (LSTM with proj_size: one more GEMM per step, h = (o tanh c) W_hr^T).
// Output: one packed 1-D tensor [out (T, B, Hout) | c_n (B, H), LSTM only]; the Python layer
// slices it (h_n is out's last processed step). Saved: the inputs, the gate activations
// (T, B, G H), the cell states (LSTM), the pre-projection h (proj), W_hn h + b_hn (GRU).
// Backward walks the steps in reverse (one GEMM per step for d(h_prev)); the weight and input
// gradients are a few whole-sequence GEMMs afterwards. Double backward (create_graph=True)
// recomputes the layer from the saved inputs with differentiable ops and backpropagates through
// that graph with grad mode on (apply_graph): slow, but exact to any order.
#pragma once
#include <string>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

enum class RnnMode { Tanh, Relu, Lstm, Gru };

struct RnnBackward : FuncOp<RnnBackward, 8> {
  static const OpSchema& schema_v1;  // {rnn, 1, Promote, produces_grad}

  // slots: x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr
  RnnMode mode_ = RnnMode::Tanh;
  bool reverse_ = false;
  int64_t T_ = 0, B_ = 0, I_ = 0, H_ = 0, Hout_ = 0;
  DType compute_dtype_ = kDefaultFloat;  // the output's dtype
  DType work_dtype_ = kDefaultFloat;     // float32 or float64: what the kernels run in
  TensorImplPtr out_;                    // the packed output's storage, without grad_fn
  uint64_t out_version_ = 0;
  TensorImplPtr gates_, cells_, hpre_, hn_;
  DType bias_dtype_[2] = {kDefaultFloat, kDefaultFloat};  // the biases' dtypes (they may be absent)

  const char* name() const override { return "RnnBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    out_.reset(), gates_.reset(), cells_.reset(), hpre_.reset(), hn_.reset();
    FuncOp::release_saved();
  }
};

RnnMode rnn_mode(const std::string& mode);

// x: (T, B, I); h0: (B, Hout); c0: (B, H) for the LSTM (nullptr otherwise); w_ih: (G H, I);
// w_hh: (G H, Hout); biases (G H,) or nullptr; w_hr: (Hout, H) for a projected LSTM or nullptr.
// `layer` names the calling layer in error messages.
TensorImplPtr rnn_layer(const std::string& mode, const TensorImplPtr& x, const TensorImplPtr& h0,
                        const TensorImplPtr& c0, const TensorImplPtr& w_ih, const TensorImplPtr& w_hh,
                        const TensorImplPtr& b_ih, const TensorImplPtr& b_hh, const TensorImplPtr& w_hr,
                        bool reverse, const std::string& layer);

}  // namespace lucid
