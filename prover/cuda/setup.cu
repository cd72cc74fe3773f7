// Fixed-base multiplication k*G for many scalars k, in G1 and G2: the TEST-ONLY setup's
// muls (prover/src/setup.rs), which take ~16 minutes on 16 CPU cores at 2^27 constraints.
//
// Why this file exists: a seeded setup at full scale (2^27) must fit a device call. The
// host builds the same comb table as the CPU setup (`Comb`: table[i*2^w + d] =
// d*2^(w*i)*G, affine, blst layout) and uploads it once; then per batch
//   setup_comb_g1 / _g2        one thread per scalar: Montgomery -> canonical, then
//                              sum_i table[i*2^w + digit_i(k)] (mixed XYZZ additions,
//                              digits of w bits from bit 0 up, zero digits skipped)
//   setup_to_affine_g1 / _g2   x = X/ZZ, y = Y/ZZZ, one inversion per chunk of points
//                              (Montgomery's batch trick), identity -> all-zero limbs
// The affine coordinates are fully reduced Montgomery limbs, the representation blstrs
// holds, so the points are bit-identical to the CPU comb's (checked by `gpu check`).
#include "msm_shift.cuh"
#include "setup_comb.cuh"

template <class A>
FI void comb_mul(const Affine<typename A::F>* __restrict__ table, uint32_t w, uint32_t windows,
                 const Fr* __restrict__ scalars, uint32_t n, Xyzz<typename A::F>* __restrict__ out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr k = Fr::from_mont(scalars[i]);
    out[i] = comb_mul_one<A>(table, w, windows, k.v);
}

// 1/a (0 -> 0).
FI Fp field_inv(const Fp& a) { return fp_inv<FpEo>(a); }
// 1/(c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2), as u^2 = -1.
FI Fp2 field_inv(const Fp2& a) {
    const Fp t = fp_inv<FpEo>(Fp::add(FpEo::sqr(a.c0), FpEo::sqr(a.c1)));
    Fp2 r;
    r.c0 = FpEo::mul(a.c0, t);
    r.c1 = Fp::neg(FpEo::mul(a.c1, t));
    return r;
}

// msm_shift.cuh's xyzz_to_affine_chunk for either group.
template <class A>
FI void to_affine(const Xyzz<typename A::F>* __restrict__ in, uint32_t n, uint32_t chunk, Affine<typename A::F>* out) {
    typedef typename A::F F;
    const uint64_t lo64 = (uint64_t)(blockIdx.x * blockDim.x + threadIdx.x) * chunk;
    if (lo64 >= n) return;
    const uint32_t lo = (uint32_t)lo64, hi = (uint32_t)min((uint64_t)n, lo64 + chunk);
    F acc = F::one();
    for (uint32_t i = lo; i < hi; i++) {
        out[i].x = acc;
        const Xyzz<F>& p = in[i];
        if (!p.is_inf()) acc = A::mul(acc, A::mul(p.ZZ, p.ZZZ));
    }
    F inv = field_inv(acc);
    for (uint32_t i = hi; i-- > lo;) {
        const Xyzz<F> p = in[i];
        Affine<F> r;
        if (p.is_inf()) {
            r.x = F::zero();
            r.y = F::zero();
        } else {
            const F di = A::mul(inv, out[i].x);
            inv = A::mul(inv, A::mul(p.ZZ, p.ZZZ));
            r.x = A::mul(p.X, A::mul(di, p.ZZZ));
            r.y = A::mul(p.Y, A::mul(di, p.ZZ));
        }
        out[i] = r;
    }
}

extern "C" __global__ void setup_comb_g1(const G1Affine* __restrict__ table, uint32_t w, uint32_t windows,
                                         const Fr* __restrict__ scalars, uint32_t n, G1Xyzz* __restrict__ out) {
    comb_mul<FpEo>(table, w, windows, scalars, n, out);
}
extern "C" __global__ void setup_comb_g2(const G2Affine* __restrict__ table, uint32_t w, uint32_t windows,
                                         const Fr* __restrict__ scalars, uint32_t n, G2Xyzz* __restrict__ out) {
    comb_mul<Fp2Eo>(table, w, windows, scalars, n, out);
}
extern "C" __global__ void setup_to_affine_g1(const G1Xyzz* __restrict__ in, uint32_t n, uint32_t chunk, G1Affine* out) {
    to_affine<FpEo>(in, n, chunk, out);
}
extern "C" __global__ void setup_to_affine_g2(const G2Xyzz* __restrict__ in, uint32_t n, uint32_t chunk, G2Affine* out) {
    to_affine<Fp2Eo>(in, n, chunk, out);
}
