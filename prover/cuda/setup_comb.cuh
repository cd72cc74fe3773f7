// The per-scalar part of the setup's fixed-base multiplication (setup.cu): the comb's digit
// extraction and sum, apart from the kernels so that the host test (cuda/test) runs the
// very code the kernels run.
//
// Comb (prover/src/setup.rs `Comb`): table[i*2^w + d] = d*2^(w*i)*G (affine, the identity
// at d = 0), so k*G = sum_i table[i*2^w + digit_i(k)] with digit_i the w bits of the
// canonical k from bit w*i: windows mixed additions, no doubling.
#pragma once
#include "curve.cuh"

// Bits [off, off + w) of a canonical scalar in 8 little-endian 32-bit limbs (1 <= w <= 16),
// zero past bit 255: the host's `msm::digit` on 64-bit limbs.
FI uint32_t comb_digit(const uint32_t* s, uint32_t off, uint32_t w) {
    const uint32_t limb = off / 32, shift = off % 32;
    if (limb >= 8) return 0;
    uint32_t d = s[limb] >> shift;
    if (shift + w > 32 && limb + 1 < 8) d |= s[limb + 1] << (32 - shift);
    return d & ((1u << w) - 1);
}

// k*G for the canonical scalar k (8 limbs) over the comb table (zero digits skipped, as the
// CPU comb does).
template <class A>
FI Xyzz<typename A::F> comb_mul_one(const Affine<typename A::F>* table, uint32_t w, uint32_t windows, const uint32_t* k) {
    Xyzz<typename A::F> acc = Xyzz<typename A::F>::inf();
    for (uint32_t win = 0; win < windows; win++) {
        const uint32_t d = comb_digit(k, win * w, w);
        if (d != 0) xyzz_add_affine_point<A>(acc, table[((uint64_t)win << w) + d], false);
    }
    return acc;
}
