// Fp2 = Fp[u] / (u^2 + 1), the field of BLS12-381's G2 coordinates: an element is c0 + c1*u,
// stored as blst's blst_fp2 (c0 then c1, each 12 Montgomery limbs), so G2 points upload
// without conversion.
//
// Why this file exists: the G2 MSM of the B query (the proof's B in G2) runs the same
// Pippenger kernels as G1 over this field (curve.cuh's formulas are written once for both).
// The product is Karatsuba (3 Fp products), the square the complex-squaring form (2); the
// Fp product inside is a policy (FpStd or FpEo), as for G1.
#pragma once
#include "field.cuh"

struct alignas(16) Fp2 {
    Fp c0, c1;

    FI static Fp2 zero() { Fp2 r; r.c0 = Fp::zero(); r.c1 = Fp::zero(); return r; }
    FI static Fp2 one() { Fp2 r; r.c0 = Fp::one(); r.c1 = Fp::zero(); return r; }
    FI bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    FI bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }

    FI static Fp2 add(const Fp2& a, const Fp2& b) { Fp2 r; r.c0 = Fp::add(a.c0, b.c0); r.c1 = Fp::add(a.c1, b.c1); return r; }
    FI static Fp2 sub(const Fp2& a, const Fp2& b) { Fp2 r; r.c0 = Fp::sub(a.c0, b.c0); r.c1 = Fp::sub(a.c1, b.c1); return r; }
    FI static Fp2 dbl(const Fp2& a) { return add(a, a); }
    FI static Fp2 neg(const Fp2& a) { Fp2 r; r.c0 = Fp::neg(a.c0); r.c1 = Fp::neg(a.c1); return r; }
    FI static Fp2 neg_ct(const Fp2& a) { Fp2 r; r.c0 = Fp::neg_ct(a.c0); r.c1 = Fp::neg_ct(a.c1); return r; }

    // (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u.
    template <class M>
    FI static Fp2 mul(const Fp2& a, const Fp2& b) {
        const Fp t0 = M::mul(a.c0, b.c0);
        const Fp t1 = M::mul(a.c1, b.c1);
        const Fp t2 = M::mul(Fp::add(a.c0, a.c1), Fp::add(b.c0, b.c1));
        Fp2 r;
        r.c0 = Fp::sub(t0, t1);
        r.c1 = Fp::sub(Fp::sub(t2, t0), t1);
        return r;
    }
    // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u.
    template <class M>
    FI static Fp2 sqr(const Fp2& a) {
        Fp2 r;
        r.c1 = M::mul(a.c0, a.c1);
        r.c0 = M::mul(Fp::add(a.c0, a.c1), Fp::sub(a.c0, a.c1));
        r.c1 = Fp::dbl(r.c1);
        return r;
    }
};
