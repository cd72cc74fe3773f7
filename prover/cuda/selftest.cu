// Self-test kernels: the device field and curve (G1, G2) arithmetic applied element-wise, so the
// host can compare every result with blstrs on fresh random inputs (`proofscope gpu check`).
#include "curve.cuh"

// out[4i..4i+4) = a*b, a+b, a-b, -a for Fr.
extern "C" __global__ void fr_selftest(const Fr* a, const Fr* b, Fr* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr x = a[i], y = b[i];
    out[4 * i + 0] = Fr::mul(x, y);
    out[4 * i + 1] = Fr::add(x, y);
    out[4 * i + 2] = Fr::sub(x, y);
    out[4 * i + 3] = Fr::neg(x);
}

extern "C" __global__ void fp_selftest(const Fp* a, const Fp* b, Fp* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fp x = a[i], y = b[i];
    out[4 * i + 0] = Fp::mul(x, y);
    out[4 * i + 1] = Fp::add(x, y);
    out[4 * i + 2] = Fp::sub(x, y);
    out[4 * i + 3] = Fp::neg(x);
}

// out[4i..4i+4) = p+q (mixed), 2p, p+q (both XYZZ), p-q (mixed, negated).
extern "C" __global__ void g1_selftest(const G1Affine* p, const G1Affine* q, G1Xyzz* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    G1Affine a = p[i], b = q[i];
    G1Xyzz r = G1Xyzz::from_affine(a);
    xyzz_add_affine_point(r, b, false);
    out[4 * i + 0] = r;
    r = G1Xyzz::from_affine(a);
    xyzz_dbl(r);
    out[4 * i + 1] = r;
    r = G1Xyzz::from_affine(a);
    xyzz_add(r, G1Xyzz::from_affine(b));
    out[4 * i + 2] = r;
    r = G1Xyzz::from_affine(a);
    xyzz_add_affine_point(r, b, true);
    out[4 * i + 3] = r;
}

// The same four results for G2 (Fp2 coordinates, even/odd product).
extern "C" __global__ void g2_selftest(const G2Affine* p, const G2Affine* q, G2Xyzz* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    G2Affine a = p[i], b = q[i];
    G2Xyzz r = G2Xyzz::from_affine(a);
    xyzz_add_affine_point<Fp2Eo>(r, b, false);
    out[4 * i + 0] = r;
    r = G2Xyzz::from_affine(a);
    xyzz_dbl<Fp2Eo>(r);
    out[4 * i + 1] = r;
    r = G2Xyzz::from_affine(a);
    xyzz_add<Fp2Eo>(r, G2Xyzz::from_affine(b));
    out[4 * i + 2] = r;
    r = G2Xyzz::from_affine(a);
    xyzz_add_affine_point<Fp2Eo>(r, b, true);
    out[4 * i + 3] = r;
}
