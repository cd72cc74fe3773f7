// Host build of field.cuh/fp2.cuh/curve.cuh with emulated PTX carry chains: algebraic identities on
// random inputs, so carry-chain mistakes show up on a machine without a GPU.
// Build and run: scripts/host-field-test.sh
#include "../curve.cuh"
#include "../msm_digits.cuh"
#include "../setup_comb.cuh"
#include "host_common.h"
#include <cstdio>
#include <random>
#include <vector>

template <class F> static bool less_than_p(const F& a) {
    for (int i = F::N - 1; i >= 0; i--) {
        uint32_t p = F::N == 12 ? FpParams::p(i) : FrParams::p(i);
        if (a.v[i] != p) return a.v[i] < p;
    }
    return false;
}

template <class F> static F rnd(std::mt19937_64& g) {
    // Random value below p: random limbs with the top limb reduced well under p's top limb.
    F r;
    for (int i = 0; i < F::N; i++) r.v[i] = (uint32_t)g();
    uint32_t top = F::N == 12 ? FpParams::p(11) : FrParams::p(7);
    r.v[F::N - 1] %= top;
    return r;
}

template <class F> static int check_field(const char* name, std::mt19937_64& g, int iters) {
    int bad = 0;
    F one = F::one();
    F one_int = F::zero(); one_int.v[0] = 1;
    if (!(F::from_mont(one) == one_int)) { printf("%s: from_mont(R) != 1\n", name); bad++; }
    for (int it = 0; it < iters; it++) {
        F a = rnd<F>(g), b = rnd<F>(g), c = rnd<F>(g);
        F ab_c = F::mul(F::mul(a, b), c), a_bc = F::mul(a, F::mul(b, c));
        F dist_l = F::mul(a, F::add(b, c)), dist_r = F::add(F::mul(a, b), F::mul(a, c));
        bool ok = ab_c == a_bc && dist_l == dist_r && F::add(F::sub(a, b), b) == a && F::mul(a, one) == a &&
                  F::add(F::neg(a), a).is_zero() && F::mul(a, b) == F::mul(b, a) && less_than_p(ab_c) &&
                  less_than_p(F::add(a, b)) && less_than_p(F::sub(a, b)) &&
                  F::sub(F::mul(a, a), F::mul(b, b)) == F::mul(F::add(a, b), F::sub(a, b));
        if (!ok) { bad++; if (bad < 4) printf("%s: identity failed at iteration %d\n", name, it); }
    }
    return bad;
}

// p - 1 (largest canonical value), for edge cases.
template <class F> static F p_minus_1() {
    F r;
    for (int i = 0; i < F::N; i++) r.v[i] = F::N == 12 ? FpParams::p(i) : FrParams::p(i);
    r.v[0] -= 1;
    return r;
}

// The even/odd product must equal the CIOS product bit for bit (also for 0, 1, R, p-1).
template <class F> static int check_mul_eo(const char* name, std::mt19937_64& g, int iters) {
    int bad = 0;
    F one_int = F::zero(); one_int.v[0] = 1;
    F edge[5] = {F::zero(), one_int, F::one(), p_minus_1<F>(), F::sub(F::zero(), F::one())};
    auto cmp = [&](const F& a, const F& b) {
        F x = F::mul(a, b), y = F::mul_eo(a, b);
        if (!(x == y) || !less_than_p(y)) { bad++; if (bad < 4) printf("%s: mul_eo differs from mul\n", name); }
    };
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) cmp(edge[i], edge[j]);
    for (int it = 0; it < iters; it++) {
        F a = rnd<F>(g), b = rnd<F>(g);
        cmp(a, b);
        cmp(a, edge[it % 5]);
        // Values near p: random low limbs under p's top limbs.
        F c = p_minus_1<F>();
        c.v[0] = (uint32_t)g(); c.v[1] = (uint32_t)g();
        if (less_than_p(c)) cmp(c, b);
    }
    for (int i = 0; i < 5; i++) {
        F n = F::neg_ct(edge[i]);
        if (!(n == F::neg(edge[i]))) { bad++; printf("%s: neg_ct differs from neg\n", name); }
    }
    return bad;
}

// The MSM digit layout: for every c in 2..24 the windows tile bits 0..254 with widths <= c,
// and for scalars (random and edge values) the folded scalar s' = s or r - s is <= (r-1)/2
// and equals sum_w d_w 2^off_w exactly, with |d_w| <= 2^(width_w - 1) and no carry left.
static int check_msm_digits(std::mt19937_64& g, int iters) {
    int bad = 0;
    auto fail = [&](const char* what, uint32_t c) { bad++; if (bad < 6) printf("msm digits c=%u: %s\n", c, what); };
    std::vector<Fr> scalars;
    Fr half; for (int i = 0; i < 8; i++) half.v[i] = fr_half(i);
    Fr one_int = Fr::zero(); one_int.v[0] = 1;
    Fr half1 = Fr::add(half, one_int);  // (r+1)/2: folds to (r-1)/2
    scalars.push_back(Fr::zero()); scalars.push_back(one_int); scalars.push_back(half); scalars.push_back(half1);
    scalars.push_back(p_minus_1<Fr>()); scalars.push_back(Fr::sub(p_minus_1<Fr>(), one_int));
    Fr allbits = half; allbits.v[7] = 0x3fffffffu;  // > half: bits 0..253 mostly set
    scalars.push_back(allbits);
    for (int it = 0; it < iters; it++) scalars.push_back(rnd<Fr>(g));
    for (uint32_t c = 2; c <= 24; c++) {
        MsmLayout l = msm_layout(c);
        uint32_t off = 0, wmax = 0;
        for (uint32_t w = 0; w < l.nwin; w++) {
            uint32_t wd = msm_win_width(l, w);
            if (msm_win_offset(l, w) != off) fail("windows not contiguous", c);
            if (wd > c || wd < 1) fail("window wider than c", c);
            off += wd; wmax = wd > wmax ? wd : wmax;
            if (w + 1 < l.nwin && msm_win_width(l, w + 1) < wd) fail("wider windows not on top", c);
        }
        if (off != 255) fail("windows do not cover 255 bits", c);
        for (const Fr& sc : scalars) {
            uint32_t s[8];
            for (int k = 0; k < 8; k++) s[k] = sc.v[k];
            bool neg = msm_fold_scalar(s);
            Fr f; for (int k = 0; k < 8; k++) f.v[k] = s[k];
            Fr back = neg ? Fr::sub(Fr::zero(), f) : f;  // r - s' (mod r)
            if (!(back == sc)) fail("fold does not give s back", c);
            bool above = false;
            for (int k = 7; k >= 0; k--) if (f.v[k] != half.v[k]) { above = f.v[k] > half.v[k]; break; }
            if (above) fail("folded scalar above (r-1)/2", c);
            // sum of d_w 2^off_w in 320-bit two's complement
            uint32_t acc[10] = {0};
            uint32_t carry = 0;
            for (uint32_t w = 0; w < l.nwin; w++) {
                int32_t d = msm_window_digit(s, l, w, carry);
                uint32_t wd = msm_win_width(l, w), o = msm_win_offset(l, w);
                uint32_t mag = (uint32_t)(d < 0 ? -d : d);
                if (mag > (1u << (wd - 1))) fail("digit out of range", c);
                uint32_t t[10] = {0};
                uint64_t sh = (uint64_t)mag << (o & 31);
                t[o >> 5] = (uint32_t)sh;
                if ((o >> 5) + 1 < 10) t[(o >> 5) + 1] = (uint32_t)(sh >> 32);
                uint64_t cy = 0;
                for (int k = 0; k < 10; k++) {
                    uint64_t v = d < 0 ? (uint64_t)acc[k] - t[k] - cy : (uint64_t)acc[k] + t[k] + cy;
                    acc[k] = (uint32_t)v;
                    cy = d < 0 ? (v >> 63) : (v >> 32);
                }
            }
            if (carry != 0) fail("carry out of the top window", c);
            bool same = acc[8] == 0 && acc[9] == 0;
            for (int k = 0; k < 8; k++) same = same && acc[k] == s[k];
            if (!same) fail("digits do not sum to the scalar", c);
        }
    }
    return bad;
}

// Fp2: Karatsuba product and complex square against the schoolbook formulas, both Fp
// products inside (CIOS and even/odd) bit for bit, u^2 = -1, ring identities.
static int check_fp2(std::mt19937_64& g, int iters) {
    int bad = 0;
    Fp2 u = Fp2::zero(); u.c1 = Fp::one();
    Fp2 minus_one = Fp2::zero(); minus_one.c0 = Fp::neg(Fp::one());
    if (!(Fp2::mul<FpStd>(u, u) == minus_one) || !(Fp2::sqr<FpEo>(u) == minus_one)) { printf("Fp2: u^2 != -1\n"); bad++; }
    for (int it = 0; it < iters; it++) {
        Fp2 a, b, c;
        a.c0 = rnd<Fp>(g); a.c1 = rnd<Fp>(g); b.c0 = rnd<Fp>(g); b.c1 = rnd<Fp>(g); c.c0 = rnd<Fp>(g); c.c1 = rnd<Fp>(g);
        if (it % 7 == 0) a.c1 = Fp::zero();
        if (it % 11 == 0) b = Fp2::zero();
        Fp2 school;
        school.c0 = Fp::sub(Fp::mul(a.c0, b.c0), Fp::mul(a.c1, b.c1));
        school.c1 = Fp::add(Fp::mul(a.c0, b.c1), Fp::mul(a.c1, b.c0));
        const Fp2 k = Fp2::mul<FpStd>(a, b), k_eo = Fp2::mul<FpEo>(a, b);
        const Fp2 sq = Fp2::sqr<FpStd>(a), sq_eo = Fp2::sqr<FpEo>(a);
        const bool ok = k == school && k_eo == school && sq == Fp2::mul<FpStd>(a, a) && sq_eo == sq &&
                        Fp2::mul<FpStd>(Fp2::mul<FpStd>(a, b), c) == Fp2::mul<FpStd>(a, Fp2::mul<FpStd>(b, c)) &&
                        Fp2::mul<FpStd>(a, Fp2::add(b, c)) == Fp2::add(k, Fp2::mul<FpStd>(a, c)) &&
                        Fp2::add(Fp2::neg(a), a).is_zero() && Fp2::neg_ct(a) == Fp2::neg(a) &&
                        (a.is_zero() || Fp2::mul<FpStd>(a, inv(a)) == Fp2::one());
        if (!ok) { bad++; if (bad < 4) printf("Fp2: identity failed at iteration %d\n", it); }
    }
    return bad;
}

// One curve's XYZZ formulas (A: CIOS policy, AE: even/odd policy) from its generator P
// (checked on y^2 = x^3 + b): P + P == 2P three ways, (2P + P) - P == 2P, P - P == O, 3P
// three ways, then for k*P (k = 1..m, accumulators with ZZ != 1) +- j*P: the mixed
// addition against repeated additions, both products bit for bit, and the bucket loops'
// straight-line madd (madd_prep + madd_generic, cond_neg) bit for bit.
template <class A, class AE>
static int check_curve(const char* name, const Affine<typename A::F>& P, const typename A::F& b, int m) {
    typedef typename A::F F;
    typedef Xyzz<F> X;
    int bad = 0;
    auto on_curve = [&](const Affine<F>& a) { return A::sqr(a.y) == F::add(A::mul(A::sqr(a.x), a.x), b); };
    if (!on_curve(P)) { printf("%s: generator not on curve (constants or field wrong)\n", name); bad++; }
    auto same = [](const X& a, const X& c) {  // X1*ZZ2 == X2*ZZ1 and Y1*ZZZ2 == Y2*ZZZ1
        if (a.is_inf() || c.is_inf()) return a.is_inf() && c.is_inf();
        return A::mul(a.X, c.ZZ) == A::mul(c.X, a.ZZ) && A::mul(a.Y, c.ZZZ) == A::mul(c.Y, a.ZZZ);
    };
    X d = X::from_affine(P); xyzz_dbl<A>(d);
    X mm = X::from_affine(P); xyzz_add_affine_point<A>(mm, P, false);
    X a2 = X::from_affine(P); xyzz_add<A>(a2, X::from_affine(P));
    if (!same(d, mm) || !same(d, a2)) { printf("%s: P+P != 2P\n", name); bad++; }
    X t = d; xyzz_add_affine_point<A>(t, P, false); xyzz_add_affine_point<A>(t, P, true);
    if (!same(t, d)) { printf("%s: (2P+P)-P != 2P\n", name); bad++; }
    X z = X::from_affine(P); xyzz_add_affine_point<A>(z, P, true);
    if (!z.is_inf()) { printf("%s: P-P != O\n", name); bad++; }
    X t3 = d; xyzz_add<A>(t3, X::from_affine(P));
    X u3 = X::from_affine(P); xyzz_add<A>(u3, d);
    X v3 = d; xyzz_add_affine_point<A>(v3, P, false);
    if (!same(t3, u3) || !same(t3, v3)) { printf("%s: 3P mismatch\n", name); bad++; }
    std::vector<X> mult;          // k*P for k = 1..m, built by additions (ZZ != 1)
    std::vector<Affine<F>> aff;   // the same, affine
    X q = X::from_affine(P);
    for (int k = 1; k <= m; k++) {
        if (k > 1) xyzz_add_affine_point<A>(q, P, false);
        mult.push_back(q);
        Affine<F> a; a.x = A::mul(q.X, inv(q.ZZ)); a.y = A::mul(q.Y, inv(q.ZZZ));
        if (!on_curve(a)) { printf("%s: affine %d*P off the curve\n", name, k); bad++; }
        aff.push_back(a);
    }
    auto bits_equal = [](const X& a, const X& c) { return a.X == c.X && a.Y == c.Y && a.ZZ == c.ZZ && a.ZZZ == c.ZZZ; };
    int fast = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            for (int neg = 0; neg < 2; neg++) {
                X ref = mult[i];
                xyzz_add_affine_point<A>(ref, aff[j], neg != 0);
                X ref_eo = mult[i];
                xyzz_add_affine_point<AE>(ref_eo, aff[j], neg != 0);
                if (!bits_equal(ref, ref_eo)) { printf("%s: even/odd curve formula differs (%d, %d)\n", name, i, j); bad++; }
                int k = neg ? (i + 1) - (j + 1) : (i + 1) + (j + 1);  // (i+1) +- (j+1) times P
                X want = X::inf();
                if (k != 0) {
                    want = X::from_affine(P);
                    for (int r = 1; r < (k < 0 ? -k : k); r++) xyzz_add_affine_point<A>(want, P, false);
                    if (k < 0) want.Y = F::neg(want.Y);
                }
                if (!same(ref, want)) { printf("%s: mixed add (%d, %d, %d) wrong\n", name, i, j, neg); bad++; }
                X acc = mult[i];
                MaddPR<F> tp = madd_prep<A>(acc, aff[j].x, cond_neg(aff[j].y, neg != 0));
                MaddPR<F> tp_eo = madd_prep<AE>(acc, aff[j].x, cond_neg(aff[j].y, neg != 0));
                if (acc.is_inf() || aff[j].is_inf() || tp.P.is_zero()) continue;  // the general path's cases
                fast++;
                X acc_eo = acc;
                madd_generic<A>(acc, tp);
                madd_generic<AE>(acc_eo, tp_eo);
                if (!bits_equal(acc, ref) || !bits_equal(acc_eo, ref)) { printf("%s: straight-line madd differs (%d, %d, %d)\n", name, i, j, neg); bad++; }
            }
    if (fast < m * m) { printf("%s: straight-line madd exercised only %d times\n", name, fast); bad++; }
    return bad;
}

// The setup's comb (setup_comb.cuh): comb_digit against a bit-by-bit extraction for every
// width 1..16 and offset, then k*G over a table built here (w = 4, 5 for G1 and 5 for G2, windows =
// ceil(255/w), table[i*2^w + d] = d*2^(w*i)*G by additions; w = 5 digits straddle limbs) against double-and-add over
// k's bits, for k = 0, 1, 2^40, r - 1, r - 2 and random 255-bit k.
template <class A>
static int check_comb(const char* name, const Affine<typename A::F>& P, std::mt19937_64& g, int iters, std::vector<uint32_t> ws) {
    typedef typename A::F F;
    typedef Xyzz<F> X;
    int bad = 0;
    for (int it = 0; it < 200; it++) {
        uint32_t s[8];
        for (int i = 0; i < 8; i++) s[i] = (uint32_t)g();
        for (uint32_t w = 1; w <= 16; w++)
            for (uint32_t off = 0; off < 260; off += 7) {
                uint32_t want = 0;
                for (uint32_t b = 0; b < w; b++) {
                    const uint32_t bit = off + b;
                    if (bit < 256 && ((s[bit / 32] >> (bit % 32)) & 1)) want |= 1u << b;
                }
                if (comb_digit(s, off, w) != want) { printf("comb_digit(off %u, w %u) wrong\n", off, w); bad++; }
            }
    }
    auto to_aff = [](const X& q) {
        Affine<F> a;
        if (q.is_inf()) { a.x = F::zero(); a.y = F::zero(); return a; }
        a.x = A::mul(q.X, inv(q.ZZ)); a.y = A::mul(q.Y, inv(q.ZZZ));
        return a;
    };
    const uint32_t r[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
    for (uint32_t w : ws) {
        const uint32_t windows = (255 + w - 1) / w;
        std::vector<Affine<F>> table((size_t)windows << w);
        X base = X::from_affine(P);
        for (uint32_t i = 0; i < windows; i++) {
            const Affine<F> b = to_aff(base);
            X acc = X::inf();
            for (uint32_t d = 0; d < (1u << w); d++) {
                table[((size_t)i << w) + d] = to_aff(acc);
                xyzz_add_affine_point<A>(acc, b, false);
            }
            for (uint32_t k = 0; k < w; k++) xyzz_dbl<A>(base);
        }
        std::vector<std::vector<uint32_t>> ks = {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}, {0, 1u << 8, 0, 0, 0, 0, 0, 0}};
        std::vector<uint32_t> rm1(r, r + 8), rm2(r, r + 8);
        rm1[0] -= 1; rm2[0] = 0xffffffffu; rm2[1] -= 1;  // r - 1, r - 2
        ks.push_back(rm1); ks.push_back(rm2);
        for (int it = 0; it < iters; it++) {
            std::vector<uint32_t> k(8);
            for (auto& x : k) x = (uint32_t)g();
            k[7] &= 0x3fffffffu;  // below r
            ks.push_back(k);
        }
        for (const auto& k : ks) {
            X want = X::inf();
            for (int bit = 255; bit >= 0; bit--) {
                xyzz_dbl<A>(want);
                if ((k[bit / 32] >> (bit % 32)) & 1) xyzz_add_affine_point<A>(want, P, false);
            }
            const Affine<F> got = to_aff(comb_mul_one<A>(table.data(), w, windows, k.data())), exp = to_aff(want);
            if (!(got.x == exp.x && got.y == exp.y)) { printf("%s comb (w %u) wrong for k = %08x..%08x\n", name, w, k[7], k[0]); bad++; }
        }
    }
    return bad;
}

int main() {
    std::mt19937_64 g(42);
    int bad = check_field<Fr>("Fr", g, 20000) + check_field<Fp>("Fp", g, 20000);
    bad += check_mul_eo<Fr>("Fr", g, 50000) + check_mul_eo<Fp>("Fp", g, 50000);
    bad += check_msm_digits(g, 3000);
    bad += check_fp2(g, 20000);
    // Curves: the generators of G1 (y^2 = x^3 + 4) and G2 (y^2 = x^3 + 4(1 + u)).
    const Fp four = Fp::add(Fp::add(Fp::one(), Fp::one()), Fp::add(Fp::one(), Fp::one()));
    bad += check_curve<FpStd, FpEo>("G1", g1_generator(), four, 24);
    Fp2 b2; b2.c0 = four; b2.c1 = four;  // 4(1 + u)
    bad += check_curve<Fp2Std, Fp2Eo>("G2", g2_generator(), b2, 12);
    bad += check_comb<FpEo>("G1", g1_generator(), g, 8, {4, 5});
    bad += check_comb<Fp2Eo>("G2", g2_generator(), g, 3, {5});
    printf(bad ? "host field test: %d FAILURES\n" : "host field test: ok (%d failures)\n", bad);
    return bad != 0;
}
