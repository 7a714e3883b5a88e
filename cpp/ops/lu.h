// lu_factor_ex: the LU factorization with partial pivoting of every matrix of a float32/float64
// input (*, m, n), through LAPACK's getrf (kernels/cpu/lapack.h): (LU, pivots, info) with LU
// (*, m, n) packing L (unit diagonal implied) and U, pivots (*, min(m, n)) int64 and 1-based,
// info (*) int64, 0 or the first zero pivot of a singular matrix. Records no gradient: the Python
// layer (pylucid._linalg_lu) wraps it in a Function whose backward is written with ops.
#pragma once
#include <tuple>

#include "core/tensor_impl.h"

namespace lucid {

std::tuple<TensorImplPtr, TensorImplPtr, TensorImplPtr> lu_factor_ex(const TensorImplPtr& a);

}  // namespace lucid
