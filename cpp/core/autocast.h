// Autocast state (thread-local, nestable through save/restore) and the single function that
// picks the dtype an op computes in:
//   Promote   -> floating inputs run in the autocast dtype (float16 / bfloat16)
//   ForceFP32 -> half inputs are upcast to float32; float32/float64 are kept (never narrowed)
//   KeepInput -> the input dtype
// Outside autocast every op computes in the promoted dtype of its inputs.
#pragma once
#include "core/dtype.h"
#include "core/op_schema.h"

namespace lucid {

struct AutocastState {
  bool enabled = false;
  DType dtype = DType::BFloat16;  // PyTorch's CPU autocast default
};
AutocastState& autocast_state();  // this thread's state

// `input` is the promoted dtype of the op's floating inputs.
DType compute_dtype(const OpSchema& schema, DType input);

}  // namespace lucid
