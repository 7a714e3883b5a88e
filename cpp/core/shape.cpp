#include "core/shape.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace lucid {

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

void check_shape_size(const Shape& s, int64_t itemsize, const char* op) {
  int64_t n = itemsize;
  for (auto d : s) {
    LUCID_CHECK_SHAPE(d >= 0, op, ": negative dimension ", d, " in shape ", shape_str(s));
    LUCID_CHECK(d == 0 || !__builtin_mul_overflow(n, d, &n), op, ": shape ", shape_str(s),
                " has more elements than a tensor can index (2^63 bytes)");
  }
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i] > 1 ? s[i] : 1;
  }
  return st;
}

bool is_dense_permutation(const Shape& shape, const Shape& strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims that move
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return true;  // empty: nothing to order
    if (shape[i] > 1) dims.emplace_back(strides[i], shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    LUCID_CHECK_SHAPE(da == db || da == 1 || db == 1, op, ": shapes ", shape_str(a), " and ",
                      shape_str(b), " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, as PyTorch
  LUCID_CHECK_INDEX(dim >= -n && dim < n, op, ": dim ", dim, " out of range for a tensor with ",
                    ndim, " dims (expected in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

std::vector<int64_t> broadcast_strides(const Shape& from, const std::vector<int64_t>& strides,
                                       const Shape& to) {
  std::vector<int64_t> out(to.size(), 0);
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) out[off + i] = from[i] == 1 ? 0 : strides[i];
  return out;
}

}  // namespace lucid
