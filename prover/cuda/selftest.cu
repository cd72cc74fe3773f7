// Self-test kernels: the device field and curve arithmetic applied element-wise, so the
// host can compare every result with blstrs on fresh random inputs (`proofscope gpu check`).
#include "g1.cuh"

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
    g1_add_affine_point(r, b, false);
    out[4 * i + 0] = r;
    r = G1Xyzz::from_affine(a);
    g1_dbl(r);
    out[4 * i + 1] = r;
    r = G1Xyzz::from_affine(a);
    g1_add(r, G1Xyzz::from_affine(b));
    out[4 * i + 2] = r;
    r = G1Xyzz::from_affine(a);
    g1_add_affine_point(r, b, true);
    out[4 * i + 3] = r;
}
