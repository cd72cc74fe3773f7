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

// 2*(x, y) for an affine point (mdbl-2008-s-1).
FI G1Xyzz g1_dbl_affine(const Fp& x, const Fp& y) {
    Fp U = Fp::dbl(y);
    Fp V = Fp::sqr(U);
    Fp W = Fp::mul(U, V);
    Fp S = Fp::mul(x, V);
    Fp xx = Fp::sqr(x);
    Fp M = Fp::add(Fp::dbl(xx), xx);
    G1Xyzz r;
    r.X = Fp::sub(Fp::sqr(M), Fp::dbl(S));
    r.Y = Fp::sub(Fp::mul(M, Fp::sub(S, r.X)), Fp::mul(W, y));
    r.ZZ = V;
    r.ZZZ = W;
    return r;
}

// p <- 2p (dbl-2008-s-1, a = 0).
FI void g1_dbl(G1Xyzz& p) {
    if (p.is_inf()) return;
    Fp U = Fp::dbl(p.Y);
    Fp V = Fp::sqr(U);
    Fp W = Fp::mul(U, V);
    Fp S = Fp::mul(p.X, V);
    Fp xx = Fp::sqr(p.X);
    Fp M = Fp::add(Fp::dbl(xx), xx);
    Fp X3 = Fp::sub(Fp::sqr(M), Fp::dbl(S));
    Fp Y3 = Fp::sub(Fp::mul(M, Fp::sub(S, X3)), Fp::mul(W, p.Y));
    p.ZZ = Fp::mul(V, p.ZZ);
    p.ZZZ = Fp::mul(W, p.ZZZ);
    p.X = X3;
    p.Y = Y3;
}

// acc <- acc + (x, y) (madd-2008-s), y already negated by the caller for a subtraction.
FI void g1_add_affine(G1Xyzz& acc, const Fp& x, const Fp& y) {
    if (acc.is_inf()) {
        acc.X = x; acc.Y = y; acc.ZZ = Fp::one(); acc.ZZZ = Fp::one();
        return;
    }
    Fp U2 = Fp::mul(x, acc.ZZ);
    Fp S2 = Fp::mul(y, acc.ZZZ);
    Fp P = Fp::sub(U2, acc.X);
    Fp R = Fp::sub(S2, acc.Y);
    if (P.is_zero()) {
        if (R.is_zero()) acc = g1_dbl_affine(x, y);
        else acc = G1Xyzz::inf();
        return;
    }
    Fp PP = Fp::sqr(P);
    Fp PPP = Fp::mul(P, PP);
    Fp Q = Fp::mul(acc.X, PP);
    Fp X3 = Fp::sub(Fp::sub(Fp::sqr(R), PPP), Fp::dbl(Q));
    Fp Y3 = Fp::sub(Fp::mul(R, Fp::sub(Q, X3)), Fp::mul(acc.Y, PPP));
    acc.ZZ = Fp::mul(acc.ZZ, PP);
    acc.ZZZ = Fp::mul(acc.ZZZ, PPP);
    acc.X = X3;
    acc.Y = Y3;
}

// acc <- acc + p for an affine point that may be the identity; `negate` subtracts it.
FI void g1_add_affine_point(G1Xyzz& acc, const G1Affine& p, bool negate) {
    if (p.is_inf()) return;
    g1_add_affine(acc, p.x, negate ? Fp::neg(p.y) : p.y);
}

// acc <- acc + q (add-2008-s).
FI void g1_add(G1Xyzz& acc, const G1Xyzz& q) {
    if (q.is_inf()) return;
    if (acc.is_inf()) { acc = q; return; }
    Fp U1 = Fp::mul(acc.X, q.ZZ);
    Fp U2 = Fp::mul(q.X, acc.ZZ);
    Fp S1 = Fp::mul(acc.Y, q.ZZZ);
    Fp S2 = Fp::mul(q.Y, acc.ZZZ);
    Fp P = Fp::sub(U2, U1);
    Fp R = Fp::sub(S2, S1);
    if (P.is_zero()) {
        if (R.is_zero()) g1_dbl(acc);
        else acc = G1Xyzz::inf();
        return;
    }
    Fp PP = Fp::sqr(P);
    Fp PPP = Fp::mul(P, PP);
    Fp Q = Fp::mul(U1, PP);
    Fp X3 = Fp::sub(Fp::sub(Fp::sqr(R), PPP), Fp::dbl(Q));
    Fp Y3 = Fp::sub(Fp::mul(R, Fp::sub(Q, X3)), Fp::mul(S1, PPP));
    acc.ZZ = Fp::mul(Fp::mul(acc.ZZ, q.ZZ), PP);
    acc.ZZZ = Fp::mul(Fp::mul(acc.ZZZ, q.ZZZ), PPP);
    acc.X = X3;
    acc.Y = Y3;
}
