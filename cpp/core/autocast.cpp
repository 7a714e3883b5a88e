#include "core/autocast.h"

namespace lucid {

AutocastState& autocast_state() {
  thread_local AutocastState s;
  return s;
}

DType compute_dtype(const OpSchema& schema, DType input) {
  const AutocastState& s = autocast_state();
  if (!s.enabled || !is_floating(input)) return input;
  switch (schema.amp_policy) {
    case AmpPolicy::Promote: return s.dtype;
    case AmpPolicy::ForceFP32: return input == DType::Float64 ? input : DType::Float32;
    case AmpPolicy::KeepInput: return input;
  }
  return input;
}

}  // namespace lucid
