// BLS12-381 G1 arithmetic (y^2 = x^3 + 4 over Fp) for the MSM kernels.
//
// Why this file exists: bucket accumulation adds affine points into accumulators millions
// of times, so the accumulators use XYZZ coordinates (x = X/ZZ, y = Y/ZZZ), whose mixed
// addition costs 8M+2S with no inversion. Affine points are blst's in-memory layout
// (x then y, Montgomery Fp); the identity is all-zero limbs, as in blst.
#pragma once
#include "field.cuh"

struct G1Affine {
    Fp x, y;
    FI bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

struct G1Xyzz {
    Fp X, Y, ZZ, ZZZ;  // identity: ZZ == 0

    FI static G1Xyzz inf() {
        G1Xyzz r;
        r.X = Fp::zero(); r.Y = Fp::zero(); r.ZZ = Fp::zero(); r.ZZZ = Fp::zero();
        return r;
    }
    FI bool is_inf() const { return ZZ.is_zero(); }
    FI static G1Xyzz from_affine(const G1Affine& p) {
        if (p.is_inf()) return inf();
        G1Xyzz r;
        r.X = p.x; r.Y = p.y; r.ZZ = Fp::one(); r.ZZZ = Fp::one();
        return r;
    }
};

// Which Fp product the curve formulas use: the CIOS mul (FpStd, the default) or the
// even/odd one (FpEo); both give identical results, only the instruction schedule differs.
struct FpStd {
    FI static Fp mul(const Fp& a, const Fp& b) { return Fp::mul(a, b); }
    FI static Fp sqr(const Fp& a) { return Fp::sqr(a); }
};
struct FpEo {
    FI static Fp mul(const Fp& a, const Fp& b) { return Fp::mul_eo(a, b); }
    FI static Fp sqr(const Fp& a) { return Fp::sqr_eo(a); }
};

// 2*(x, y) for an affine point (mdbl-2008-s-1).
template <class A = FpStd>
FI G1Xyzz g1_dbl_affine(const Fp& x, const Fp& y) {
    Fp U = Fp::dbl(y);
    Fp V = A::sqr(U);
    Fp W = A::mul(U, V);
    Fp S = A::mul(x, V);
    Fp xx = A::sqr(x);
    Fp M = Fp::add(Fp::dbl(xx), xx);
    G1Xyzz r;
    r.X = Fp::sub(A::sqr(M), Fp::dbl(S));
    r.Y = Fp::sub(A::mul(M, Fp::sub(S, r.X)), A::mul(W, y));
    r.ZZ = V;
    r.ZZZ = W;
    return r;
}

// p <- 2p (dbl-2008-s-1, a = 0).
template <class A = FpStd>
FI void g1_dbl(G1Xyzz& p) {
    if (p.is_inf()) return;
    Fp U = Fp::dbl(p.Y);
    Fp V = A::sqr(U);
    Fp W = A::mul(U, V);
    Fp S = A::mul(p.X, V);
    Fp xx = A::sqr(p.X);
    Fp M = Fp::add(Fp::dbl(xx), xx);
    Fp X3 = Fp::sub(A::sqr(M), Fp::dbl(S));
    Fp Y3 = Fp::sub(A::mul(M, Fp::sub(S, X3)), A::mul(W, p.Y));
    p.ZZ = A::mul(V, p.ZZ);
    p.ZZZ = A::mul(W, p.ZZZ);
    p.X = X3;
    p.Y = Y3;
}

// acc <- acc + (x, y) (madd-2008-s), y already negated by the caller for a subtraction.
template <class A = FpStd>
FI void g1_add_affine(G1Xyzz& acc, const Fp& x, const Fp& y) {
    if (acc.is_inf()) {
        acc.X = x; acc.Y = y; acc.ZZ = Fp::one(); acc.ZZZ = Fp::one();
        return;
    }
    Fp U2 = A::mul(x, acc.ZZ);
    Fp S2 = A::mul(y, acc.ZZZ);
    Fp P = Fp::sub(U2, acc.X);
    Fp R = Fp::sub(S2, acc.Y);
    if (P.is_zero()) {
        if (R.is_zero()) acc = g1_dbl_affine<A>(x, y);
        else acc = G1Xyzz::inf();
        return;
    }
    Fp PP = A::sqr(P);
    Fp PPP = A::mul(P, PP);
    Fp Q = A::mul(acc.X, PP);
    Fp X3 = Fp::sub(Fp::sub(A::sqr(R), PPP), Fp::dbl(Q));
    Fp Y3 = Fp::sub(A::mul(R, Fp::sub(Q, X3)), A::mul(acc.Y, PPP));
    acc.ZZ = A::mul(acc.ZZ, PP);
    acc.ZZZ = A::mul(acc.ZZZ, PPP);
    acc.X = X3;
    acc.Y = Y3;
}

// acc <- acc + p for an affine point that may be the identity; `negate` subtracts it.
template <class A = FpStd>
FI void g1_add_affine_point(G1Xyzz& acc, const G1Affine& p, bool negate) {
    if (p.is_inf()) return;
    g1_add_affine<A>(acc, p.x, negate ? Fp::neg(p.y) : p.y);
}

// acc <- acc + q (add-2008-s).
template <class A = FpStd>
FI void g1_add(G1Xyzz& acc, const G1Xyzz& q) {
    if (q.is_inf()) return;
    if (acc.is_inf()) { acc = q; return; }
    Fp U1 = A::mul(acc.X, q.ZZ);
    Fp U2 = A::mul(q.X, acc.ZZ);
    Fp S1 = A::mul(acc.Y, q.ZZZ);
    Fp S2 = A::mul(q.Y, acc.ZZZ);
    Fp P = Fp::sub(U2, U1);
    Fp R = Fp::sub(S2, S1);
    if (P.is_zero()) {
        if (R.is_zero()) g1_dbl<A>(acc);
        else acc = G1Xyzz::inf();
        return;
    }
    Fp PP = A::sqr(P);
    Fp PPP = A::mul(P, PP);
    Fp Q = A::mul(U1, PP);
    Fp X3 = Fp::sub(Fp::sub(A::sqr(R), PPP), Fp::dbl(Q));
    Fp Y3 = Fp::sub(A::mul(R, Fp::sub(Q, X3)), A::mul(S1, PPP));
    acc.ZZ = A::mul(A::mul(acc.ZZ, q.ZZ), PP);
    acc.ZZZ = A::mul(A::mul(acc.ZZZ, q.ZZZ), PPP);
    acc.X = X3;
    acc.Y = Y3;
}

// Straight-line mixed addition for the bucket loops, in two halves so that a loop can run
// the first half for several accumulators, test once whether any of them needs the general
// code, and run the second halves together in one basic block (independent instruction
// streams that the scheduler interleaves). madd_prep computes P = x*ZZ - X and
// R = y*ZZZ - Y; madd_generic finishes madd-2008-s. Valid only when acc is not the identity,
// the point is not the identity and P != 0 (else use g1_add_affine_point).
struct MaddPR { Fp P, R; };
template <class A>
FI MaddPR madd_prep(const G1Xyzz& acc, const Fp& x, const Fp& y) {
    MaddPR t;
    t.P = Fp::sub(A::mul(x, acc.ZZ), acc.X);
    t.R = Fp::sub(A::mul(y, acc.ZZZ), acc.Y);
    return t;
}
template <class A>
FI void madd_generic(G1Xyzz& acc, const MaddPR& t) {
    Fp PP = A::sqr(t.P);
    Fp PPP = A::mul(t.P, PP);
    Fp Q = A::mul(acc.X, PP);
    Fp X3 = Fp::sub(Fp::sub(A::sqr(t.R), PPP), Fp::dbl(Q));
    Fp Y3 = Fp::sub(A::mul(t.R, Fp::sub(Q, X3)), A::mul(acc.Y, PPP));
    acc.ZZ = A::mul(acc.ZZ, PP);
    acc.ZZZ = A::mul(acc.ZZZ, PPP);
    acc.X = X3;
    acc.Y = Y3;
}
// y or -y without a branch.
FI Fp cond_neg(const Fp& y, bool negate) {
    Fp n = Fp::neg_ct(y);
    Fp r;
    _Pragma("unroll") for (int i = 0; i < Fp::N; i++) r.v[i] = negate ? n.v[i] : y.v[i];
    return r;
}
