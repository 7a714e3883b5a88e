#include "ops/lu.h"

#include <vector>

#include "kernels/cpu/lapack.h"
#include "ops/op_utils.h"

namespace lucid {

namespace {

const OpSchema& kLuFactorSchema = register_schema(
    {.name = "lu_factor_ex", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

template <class T>
void factor_all(const TensorImplPtr& lu, const TensorImplPtr& piv, const TensorImplPtr& info, int64_t nb, int64_t m,
                int64_t n) {
  const int64_t k = m < n ? m : n;
  std::vector<T> work(size_t(m * n > 0 ? m * n : 1));
  T* p = lu->data<T>();
  for (int64_t b = 0; b < nb; ++b) {
    info->data<int64_t>()[b] =
        m * n > 0 ? kernels::getrf(m, n, p + b * m * n, piv->data<int64_t>() + b * k, work.data()) : 0;
  }
}

}  // namespace

std::tuple<TensorImplPtr, TensorImplPtr, TensorImplPtr> lu_factor_ex(const TensorImplPtr& a) {
  (void)kLuFactorSchema;
  LUCID_CHECK_SHAPE(a->ndim() >= 2, "linalg.lu_factor_ex: Expected tensor with 2 or more dimensions. Got size: ",
                    shape_str(a->shape), " instead");
  LUCID_CHECK_DTYPE(a->dtype == DType::Float32 || a->dtype == DType::Float64,
                    "linalg.lu_factor_ex: expected a floating point tensor of dtype float32 or float64, got ",
                    dtype_name(a->dtype));
  const int64_t m = a->shape[a->ndim() - 2], n = a->shape[a->ndim() - 1];
  LUCID_CHECK_SHAPE(m <= kernels::kLapackMaxDim && n <= kernels::kLapackMaxDim && m * n <= kernels::kLapackMaxDim,
                    "linalg.lu_factor_ex: matrices of shape ", shape_str(a->shape), " are too large for LAPACK");
  const int64_t k = m < n ? m : n;
  Shape batch(a->shape.begin(), a->shape.end() - 2);
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  auto lu = empty(a->shape, a->dtype);
  copy_into(lu, a);
  Shape piv_shape = batch;
  piv_shape.push_back(k);
  auto piv = empty(piv_shape, DType::Int64);
  auto info = empty(batch, DType::Int64);
  if (a->dtype == DType::Float32) {
    factor_all<float>(lu, piv, info, nb, m, n);
  } else {
    factor_all<double>(lu, piv, info, nb, m, n);
  }
  return {lu, piv, info};
}

}  // namespace lucid
