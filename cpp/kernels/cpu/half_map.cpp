// The block loop of half_map.h, compiled once per input count.
#include "kernels/cpu/half_map.h"

namespace lucid::kernels {

namespace {

template <class H>
void load_block(const char* p, int64_t stride, int64_t m, float* dst) {
  const H* x = reinterpret_cast<const H*>(p);
  if (stride == 1)
    for (int64_t i = 0; i < m; ++i) dst[i] = float(x[i]);
  else
    for (int64_t i = 0; i < m; ++i) dst[i] = float(x[i * stride]);
}

template <class H>
void store_block(const float* src, int64_t m, char* p, int64_t stride) {
  H* y = reinterpret_cast<H*>(p);
  if (stride == 1)
    for (int64_t i = 0; i < m; ++i) y[i] = H(src[i]);
  else
    for (int64_t i = 0; i < m; ++i) y[i * stride] = H(src[i]);
}

template <class H, size_t NIn>
void half_rows(bool out_bool, const Shape& shape, void* out, const Shape& os, std::array<const void*, NIn> in,
               std::array<const Shape*, NIn> is, HalfBody<NIn> body) {
  std::array<const std::vector<int64_t>*, NIn + 1> strides;
  std::array<char*, NIn + 1> base;
  std::array<int64_t, NIn + 1> isz;
  strides[0] = &os, base[0] = static_cast<char*>(out), isz[0] = out_bool ? 1 : int64_t(sizeof(H));
  for (size_t k = 0; k < NIn; ++k)
    strides[k + 1] = is[k], base[k + 1] = static_cast<char*>(const_cast<void*>(in[k])), isz[k + 1] = int64_t(sizeof(H));
  strided_loop<NIn + 1>(shape, strides, base, isz,
                        [&](std::array<char*, NIn + 1> p, int64_t n, std::array<int64_t, NIn + 1> s) {
                          float buf[NIn][kHalfBlock];
                          alignas(4) float res[kHalfBlock];
                          std::array<const float*, NIn> blk;
                          for (size_t k = 0; k < NIn; ++k) blk[k] = buf[k];
                          for (int64_t j = 0; j < n; j += kHalfBlock) {
                            const int64_t m = std::min(kHalfBlock, n - j);
                            for (size_t k = 0; k < NIn; ++k)
                              load_block<H>(p[k + 1] + j * s[k + 1] * int64_t(sizeof(H)), s[k + 1], m, buf[k]);
                            if (out_bool) {
                              bool* o = reinterpret_cast<bool*>(p[0]) + j * s[0];
                              if (s[0] == 1) {
                                body(o, blk, m);
                              } else {
                                bool* r = reinterpret_cast<bool*>(res);
                                body(r, blk, m);
                                for (int64_t i = 0; i < m; ++i) o[i * s[0]] = r[i];
                              }
                            } else {
                              body(res, blk, m);
                              store_block<H>(res, m, p[0] + j * s[0] * int64_t(sizeof(H)), s[0]);
                            }
                          }
                        });
}

}  // namespace

template <size_t NIn>
void half_map(DType dt, bool out_bool, const Shape& shape, void* out, const Shape& os,
              std::array<const void*, NIn> in, std::array<const Shape*, NIn> is, HalfBody<NIn> body) {
  if (dt == DType::Float16) half_rows<Half, NIn>(out_bool, shape, out, os, in, is, body);
  else half_rows<BFloat16, NIn>(out_bool, shape, out, os, in, is, body);
}

template void half_map<1>(DType, bool, const Shape&, void*, const Shape&, std::array<const void*, 1>,
                          std::array<const Shape*, 1>, HalfBody<1>);
template void half_map<2>(DType, bool, const Shape&, void*, const Shape&, std::array<const void*, 2>,
                          std::array<const Shape*, 2>, HalfBody<2>);
template void half_map<3>(DType, bool, const Shape&, void*, const Shape&, std::array<const void*, 3>,
                          std::array<const Shape*, 3>, HalfBody<3>);

}  // namespace lucid::kernels
