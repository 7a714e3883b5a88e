#include "ops/op_table.h"

namespace lucid {

// Function-local statics: filled by other files' static initialisers, whatever their order.
static std::vector<UnaryEntry>& unary_table() {
  static std::vector<UnaryEntry> t;
  return t;
}
static std::vector<BinaryEntry>& binary_table() {
  static std::vector<BinaryEntry> t;
  return t;
}

const std::vector<UnaryEntry>& unary_ops() { return unary_table(); }
const std::vector<BinaryEntry>& binary_ops() { return binary_table(); }
bool register_op(const UnaryEntry& e) {
  unary_table().push_back(e);
  return true;
}
bool register_op(const BinaryEntry& e) {
  binary_table().push_back(e);
  return true;
}

}  // namespace lucid
