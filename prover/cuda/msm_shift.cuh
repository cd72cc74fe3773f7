// Precomputed shifted bases for the G1 MSM ("pre" configs, prover/src/gpu/msm.rs).
//
// Why this file exists: Pippenger with nwin windows adds every point once per window into
// that window's buckets, then combines the windows with width doublings each. When the
// points are fixed (the proving key's queries stay resident for thousands of proofs), the
// table T[w][i] = 2^(offset of window w) * P_i can be built once; the digit of window w of
// scalar i then selects T[w][i], every window shares ONE set of buckets, the bucket
// reduction runs once instead of nwin times and no window combination is needed. That
// makes wide windows cheap (c = 20: 13 windows instead of 16 at c = 16, 19 % fewer
// additions, at 13 times the points' memory).
//
// The table is built window by window: T[w] = 2^(width of window w-1) * T[w-1], the
// doublings in XYZZ (g1_shift_dbl), then back to affine with one Fermat inversion per
// chunk of points (Montgomery's batch trick, g1_xyzz_to_affine).
#pragma once
#include "curve.cuh"

// a^(p-2) = 1/a in Fp (0 -> 0), square-and-multiply over the bits of p - 2.
template <class A>
FI Fp fp_inv(const Fp& a) {
    Fp r = Fp::one();
    for (int i = 11; i >= 0; i--) {
        const uint32_t e = FpParams::p(i) - (i == 0 ? 2u : 0u);  // p's low limb is 0xffffaaab: no borrow
        for (int b = 31; b >= 0; b--) {
            r = A::sqr(r);
            if ((e >> b) & 1) r = A::mul(r, a);
        }
    }
    return r;
}

// tmp[i] = 2^width * in[i] (XYZZ; the identity stays the identity).
template <class A>
FI void shift_dbl(const G1Affine* __restrict__ in, uint32_t n, uint32_t width, G1Xyzz* __restrict__ tmp) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    G1Xyzz p = G1Xyzz::from_affine(in[i]);
    for (uint32_t k = 0; k < width; k++) xyzz_dbl<A>(p);
    tmp[i] = p;
}

// out[i] = affine(in[i]) for the chunk [t*chunk, (t+1)*chunk) of thread t: x = X/ZZ,
// y = Y/ZZZ from one inversion of the chunk's product of d_i = ZZ_i * ZZZ_i (identities,
// d = 0, are left out of the product and written as the all-zero affine identity). The
// prefix products are parked in out[i].x until the backward pass overwrites them.
template <class A>
FI void xyzz_to_affine_chunk(const G1Xyzz* __restrict__ in, uint32_t n, uint32_t chunk, G1Affine* out) {
    const uint64_t lo64 = (uint64_t)(blockIdx.x * blockDim.x + threadIdx.x) * chunk;
    if (lo64 >= n) return;
    const uint32_t lo = (uint32_t)lo64, hi = (uint32_t)min((uint64_t)n, lo64 + chunk);
    Fp acc = Fp::one();
    for (uint32_t i = lo; i < hi; i++) {
        out[i].x = acc;
        const G1Xyzz p = in[i];
        if (!p.is_inf()) acc = A::mul(acc, A::mul(p.ZZ, p.ZZZ));
    }
    Fp inv = fp_inv<A>(acc);  // 1 / (product of the chunk's d_i)
    for (uint32_t i = hi; i-- > lo;) {
        const G1Xyzz p = in[i];
        G1Affine r;
        if (p.is_inf()) {
            r.x = Fp::zero();
            r.y = Fp::zero();
        } else {
            const Fp di = A::mul(inv, out[i].x);  // 1 / d_i
            inv = A::mul(inv, A::mul(p.ZZ, p.ZZZ));
            r.x = A::mul(p.X, A::mul(di, p.ZZZ));  // X / ZZ
            r.y = A::mul(p.Y, A::mul(di, p.ZZ));   // Y / ZZZ
        }
        out[i] = r;
    }
}
