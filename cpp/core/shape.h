// Shape helpers: numel, contiguous strides, numpy broadcasting, dim wrapping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lucid {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& s);
// Throws LucidError naming `op` unless every dim is >= 0 and the product of the sizes (zeros
// skipped, so strides stay representable) times `itemsize` fits in int64: a wrapped element
// count would make a 2^80-element tensor look empty.
void check_shape_size(const Shape& s, int64_t itemsize, const char* op);
Shape contiguous_strides(const Shape& s);
// Whether `strides` lay out `shape` densely without overlap in some order of the dims (PyTorch's
// non_overlapping_and_dense: a permutation of contiguous strides, size-1 dims ignored). PyTorch's
// empty_like keeps such strides, so what it fills element by element follows this memory order.
bool is_dense_permutation(const Shape& shape, const Shape& strides);
std::string shape_str(const Shape& s);
// Broadcast two shapes by numpy's rules; throws ShapeMismatch naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Wrap a possibly negative dim into [0, ndim); throws IndexOutOfRange naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// Strides that view a tensor of shape `from` (with `strides`) as broadcast to `to`.
std::vector<int64_t> broadcast_strides(const Shape& from, const std::vector<int64_t>& strides,
                                       const Shape& to);

}  // namespace lucid
