// Convolution kernels: im2col / col2im between an (N, C, H, W) image and a column matrix, and
// the (N, C, L) <-> (C, N*L) transposes that let one GEMM cover a whole batch.
// Geometry (ConvGeom): an image of H x W and a grid of OH x OW kernel positions; position
// (oh, ow) with tap (i, j) reads image pixel (oh*sH - pH + i*dH, ow*sW - pW + j*dW), zero when
// outside the image. The column matrix of channels [c0, c0 + C) and batch items [n0, n0 + nb)
// has rows (c, i, j) and columns (n, oh, ow): col[(c*kH + i)*kW + j][n*OH*OW + oh*OW + ow].
#pragma once
#include <cstdint>

namespace lucid::kernels {

struct ConvGeom {
  int64_t C = 0, H = 0, W = 0;     // channels of the whole image tensor, image size
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
  int64_t OH = 0, OW = 0;           // grid size
};

// col (rows = Cg*kH*kW, cols = nb*OH*OW) from x[n0 .. n0+nb, c0 .. c0+Cg] (x contiguous NCHW).
template <class T>
void im2col(const T* x, const ConvGeom& g, int64_t n0, int64_t nb, int64_t c0, int64_t Cg, T* col);

// The adjoint of im2col: x[n0.., c0..] += col (x contiguous NCHW, already initialised).
template <class T>
void col2im(const T* col, const ConvGeom& g, int64_t n0, int64_t nb, int64_t c0, int64_t Cg, T* x);

// dst (C, nb*L) from src[n0 .. n0+nb] of an (N, C, L) tensor.
template <class T>
void nc_to_cn(const T* src, int64_t C, int64_t L, int64_t n0, int64_t nb, T* dst);

// dst[n0 .. n0+nb] of an (N, C, L) tensor from src (C, nb*L), plus bias[c] when bias is set.
template <class T>
void cn_to_nc(const T* src, const T* bias, int64_t C, int64_t L, int64_t n0, int64_t nb, T* dst);

// out[c] = sum over n, l of g (N, C, L).
template <class T>
void bias_grad(const T* g, int64_t N, int64_t C, int64_t L, T* out);

}  // namespace lucid::kernels
