// BLS12-381 curve arithmetic for the MSM kernels, written once for G1 (y^2 = x^3 + 4 over
// Fp) and G2 (y^2 = x^3 + 4(1 + u) over Fp2): both have a = 0, and no formula below uses b,
// so the same XYZZ code serves both, instantiated with a field policy.
//
// Why this file exists: bucket accumulation adds affine points into accumulators millions
// of times, so the accumulators use XYZZ coordinates (x = X/ZZ, y = Y/ZZZ), whose mixed
// addition costs 8M+2S with no inversion. Affine points are blst's in-memory layout
// (x then y, Montgomery limbs); the identity is all-zero limbs, as in blst.
#pragma once
#include "field.cuh"
#include "fp2.cuh"

template <class F>
struct Affine {
    F x, y;
    FI bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct Xyzz {
    F X, Y, ZZ, ZZZ;  // identity: ZZ == 0

    FI static Xyzz inf() {
        Xyzz r;
        r.X = F::zero(); r.Y = F::zero(); r.ZZ = F::zero(); r.ZZZ = F::zero();
        return r;
    }
    FI bool is_inf() const { return ZZ.is_zero(); }
    FI static Xyzz from_affine(const Affine<F>& p) {
        if (p.is_inf()) return inf();
        Xyzz r;
        r.X = p.x; r.Y = p.y; r.ZZ = F::one(); r.ZZZ = F::one();
        return r;
    }
};

typedef Affine<Fp> G1Affine;
typedef Xyzz<Fp> G1Xyzz;
typedef Affine<Fp2> G2Affine;
typedef Xyzz<Fp2> G2Xyzz;

// Field policies: the coordinate field F and its product. For G1 the CIOS mul (FpStd, the
// default) or the even/odd one (FpEo); for G2, Fp2 over either. Results are identical, only
// the instruction schedule differs.
struct FpStd {
    typedef Fp F;
    FI static Fp mul(const Fp& a, const Fp& b) { return Fp::mul(a, b); }
    FI static Fp sqr(const Fp& a) { return Fp::sqr(a); }
};
struct FpEo {
    typedef Fp F;
    FI static Fp mul(const Fp& a, const Fp& b) { return Fp::mul_eo(a, b); }
    FI static Fp sqr(const Fp& a) { return Fp::sqr_eo(a); }
};
template <class M>
struct Fp2With {
    typedef Fp2 F;
    FI static Fp2 mul(const Fp2& a, const Fp2& b) { return Fp2::mul<M>(a, b); }
    FI static Fp2 sqr(const Fp2& a) { return Fp2::sqr<M>(a); }
};
typedef Fp2With<FpStd> Fp2Std;
typedef Fp2With<FpEo> Fp2Eo;

// 2*(x, y) for an affine point (mdbl-2008-s-1).
template <class A = FpStd>
FI Xyzz<typename A::F> xyzz_dbl_affine(const typename A::F& x, const typename A::F& y) {
    typedef typename A::F F;
    F U = F::dbl(y);
    F V = A::sqr(U);
    F W = A::mul(U, V);
    F S = A::mul(x, V);
    F xx = A::sqr(x);
    F M = F::add(F::dbl(xx), xx);
    Xyzz<F> r;
    r.X = F::sub(A::sqr(M), F::dbl(S));
    r.Y = F::sub(A::mul(M, F::sub(S, r.X)), A::mul(W, y));
    r.ZZ = V;
    r.ZZZ = W;
    return r;
}

// p <- 2p (dbl-2008-s-1, a = 0).
template <class A = FpStd>
FI void xyzz_dbl(Xyzz<typename A::F>& p) {
    typedef typename A::F F;
    if (p.is_inf()) return;
    F U = F::dbl(p.Y);
    F V = A::sqr(U);
    F W = A::mul(U, V);
    F S = A::mul(p.X, V);
    F xx = A::sqr(p.X);
    F M = F::add(F::dbl(xx), xx);
    F X3 = F::sub(A::sqr(M), F::dbl(S));
    F Y3 = F::sub(A::mul(M, F::sub(S, X3)), A::mul(W, p.Y));
    p.ZZ = A::mul(V, p.ZZ);
    p.ZZZ = A::mul(W, p.ZZZ);
    p.X = X3;
    p.Y = Y3;
}

// acc <- acc + (x, y) (madd-2008-s), y already negated by the caller for a subtraction.
template <class A = FpStd>
FI void xyzz_add_affine(Xyzz<typename A::F>& acc, const typename A::F& x, const typename A::F& y) {
    typedef typename A::F F;
    if (acc.is_inf()) {
        acc.X = x; acc.Y = y; acc.ZZ = F::one(); acc.ZZZ = F::one();
        return;
    }
    F U2 = A::mul(x, acc.ZZ);
    F S2 = A::mul(y, acc.ZZZ);
    F P = F::sub(U2, acc.X);
    F R = F::sub(S2, acc.Y);
    if (P.is_zero()) {
        if (R.is_zero()) acc = xyzz_dbl_affine<A>(x, y);
        else acc = Xyzz<F>::inf();
        return;
    }
    F PP = A::sqr(P);
    F PPP = A::mul(P, PP);
    F Q = A::mul(acc.X, PP);
    F X3 = F::sub(F::sub(A::sqr(R), PPP), F::dbl(Q));
    F Y3 = F::sub(A::mul(R, F::sub(Q, X3)), A::mul(acc.Y, PPP));
    acc.ZZ = A::mul(acc.ZZ, PP);
    acc.ZZZ = A::mul(acc.ZZZ, PPP);
    acc.X = X3;
    acc.Y = Y3;
}

// acc <- acc + p for an affine point that may be the identity; `negate` subtracts it.
template <class A = FpStd>
FI void xyzz_add_affine_point(Xyzz<typename A::F>& acc, const Affine<typename A::F>& p, bool negate) {
    typedef typename A::F F;
    if (p.is_inf()) return;
    xyzz_add_affine<A>(acc, p.x, negate ? F::neg(p.y) : p.y);
}

// acc <- acc + q (add-2008-s).
template <class A = FpStd>
FI void xyzz_add(Xyzz<typename A::F>& acc, const Xyzz<typename A::F>& q) {
    typedef typename A::F F;
    if (q.is_inf()) return;
    if (acc.is_inf()) { acc = q; return; }
    F U1 = A::mul(acc.X, q.ZZ);
    F U2 = A::mul(q.X, acc.ZZ);
    F S1 = A::mul(acc.Y, q.ZZZ);
    F S2 = A::mul(q.Y, acc.ZZZ);
    F P = F::sub(U2, U1);
    F R = F::sub(S2, S1);
    if (P.is_zero()) {
        if (R.is_zero()) xyzz_dbl<A>(acc);
        else acc = Xyzz<F>::inf();
        return;
    }
    F PP = A::sqr(P);
    F PPP = A::mul(P, PP);
    F Q = A::mul(U1, PP);
    F X3 = F::sub(F::sub(A::sqr(R), PPP), F::dbl(Q));
    F Y3 = F::sub(A::mul(R, F::sub(Q, X3)), A::mul(S1, PPP));
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
// the point is not the identity and P != 0 (else use xyzz_add_affine_point).
template <class F>
struct MaddPR { F P, R; };
template <class A>
FI MaddPR<typename A::F> madd_prep(const Xyzz<typename A::F>& acc, const typename A::F& x, const typename A::F& y) {
    typedef typename A::F F;
    MaddPR<F> t;
    t.P = F::sub(A::mul(x, acc.ZZ), acc.X);
    t.R = F::sub(A::mul(y, acc.ZZZ), acc.Y);
    return t;
}
template <class A>
FI void madd_generic(Xyzz<typename A::F>& acc, const MaddPR<typename A::F>& t) {
    typedef typename A::F F;
    F PP = A::sqr(t.P);
    F PPP = A::mul(t.P, PP);
    F Q = A::mul(acc.X, PP);
    F X3 = F::sub(F::sub(A::sqr(t.R), PPP), F::dbl(Q));
    F Y3 = F::sub(A::mul(t.R, F::sub(Q, X3)), A::mul(acc.Y, PPP));
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
FI Fp2 cond_neg(const Fp2& y, bool negate) {
    Fp2 r;
    r.c0 = cond_neg(y.c0, negate);
    r.c1 = cond_neg(y.c1, negate);
    return r;
}
