// Host build of field.cuh/g1.cuh with emulated PTX carry chains: algebraic identities on
// random inputs, so carry-chain mistakes show up on a machine without a GPU.
// Build and run: scripts/host-field-test.sh
#include "../g1.cuh"
#include "../msm_digits.cuh"
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

int main() {
    std::mt19937_64 g(42);
    int bad = check_field<Fr>("Fr", g, 20000) + check_field<Fp>("Fp", g, 20000);
    bad += check_mul_eo<Fr>("Fr", g, 50000) + check_mul_eo<Fp>("Fp", g, 50000);
    bad += check_msm_digits(g, 3000);
    // Curve: a point on y^2 = x^3 + 4 from the generator's coordinates, checked through
    // (P + P) == 2P and (2P + P) - P == 2P in XYZZ, compared projectively.
    // Generator x, y in Montgomery form (blst's BLS12_381_G1 constants).
    const uint64_t gx[6] = {0x5cb38790fd530c16, 0x7817fc679976fff5, 0x154f95c7143ba1c1,
                            0xf0ae6acdf3d0e747, 0xedce6ecc21dbf440, 0x120177419e0bfb75};
    const uint64_t gy[6] = {0xbaac93d50ce72271, 0x8c22631a7918fd8e, 0xdd595f13570725ce,
                            0x51ac582950405194, 0x0e1c8c3fad0059c0, 0x0bbc3efc5008a26a};
    G1Affine P;
    for (int i = 0; i < 6; i++) {
        P.x.v[2 * i] = (uint32_t)gx[i]; P.x.v[2 * i + 1] = (uint32_t)(gx[i] >> 32);
        P.y.v[2 * i] = (uint32_t)gy[i]; P.y.v[2 * i + 1] = (uint32_t)(gy[i] >> 32);
    }
    Fp four = Fp::add(Fp::add(Fp::one(), Fp::one()), Fp::add(Fp::one(), Fp::one()));
    Fp lhs = Fp::sqr(P.y), rhs = Fp::add(Fp::mul(Fp::sqr(P.x), P.x), four);
    if (!(lhs == rhs)) { printf("generator not on curve (constants or field wrong)\n"); bad++; }
    auto same = [](const G1Xyzz& a, const G1Xyzz& b) {  // X1*ZZ2 == X2*ZZ1 and Y1*ZZZ2 == Y2*ZZZ1
        if (a.is_inf() || b.is_inf()) return a.is_inf() && b.is_inf();
        return Fp::mul(a.X, b.ZZ) == Fp::mul(b.X, a.ZZ) && Fp::mul(a.Y, b.ZZZ) == Fp::mul(b.Y, a.ZZZ);
    };
    G1Xyzz d = G1Xyzz::from_affine(P); g1_dbl(d);
    G1Xyzz m = G1Xyzz::from_affine(P); g1_add_affine_point(m, P, false);
    G1Xyzz a2 = G1Xyzz::from_affine(P); g1_add(a2, G1Xyzz::from_affine(P));
    if (!same(d, m) || !same(d, a2)) { printf("P+P != 2P\n"); bad++; }
    G1Xyzz t = d; g1_add_affine_point(t, P, false); g1_add_affine_point(t, P, true);
    if (!same(t, d)) { printf("(2P+P)-P != 2P\n"); bad++; }
    G1Xyzz z = G1Xyzz::from_affine(P); g1_add_affine_point(z, P, true);
    if (!z.is_inf()) { printf("P-P != O\n"); bad++; }
    G1Xyzz t3 = d; g1_add(t3, G1Xyzz::from_affine(P));  // 3P two ways
    G1Xyzz u3 = G1Xyzz::from_affine(P); g1_add(u3, d);
    G1Xyzz v3 = d; g1_add_affine_point(v3, P, false);
    if (!same(t3, u3) || !same(t3, v3)) { printf("3P mismatch\n"); bad++; }
    // The bucket loops' straight-line mixed addition (madd_prep + madd_generic, cond_neg) and
    // the even/odd product inside the curve formulas: bit-identical to g1_add_affine_point
    // on affine multiples k*G added to XYZZ accumulators with ZZ != 1.
    {
        auto inv = [](const Fp& a) {  // a^(p-2)
            Fp r = Fp::one();
            for (int i = 11; i >= 0; i--) {
                uint32_t e = FpParams::p(i) - (i == 0 ? 2u : 0u);
                for (int b = 31; b >= 0; b--) {
                    r = Fp::sqr(r);
                    if ((e >> b) & 1) r = Fp::mul(r, a);
                }
            }
            return r;
        };
        std::vector<G1Xyzz> mult;   // k*G for k = 1..24, built by additions (ZZ != 1)
        std::vector<G1Affine> aff;  // the same, affine
        G1Xyzz q = G1Xyzz::from_affine(P);
        for (int k = 1; k <= 24; k++) {
            if (k > 1) g1_add_affine_point(q, P, false);
            mult.push_back(q);
            Fp zzi = inv(q.ZZ), zzzi = inv(q.ZZZ);
            G1Affine a; a.x = Fp::mul(q.X, zzi); a.y = Fp::mul(q.Y, zzzi);
            if (!(Fp::sqr(a.y) == Fp::add(Fp::mul(Fp::sqr(a.x), a.x), four))) { printf("affine %d*G off the curve\n", k); bad++; }
            aff.push_back(a);
        }
        auto bits_equal = [](const G1Xyzz& a, const G1Xyzz& b) { return a.X == b.X && a.Y == b.Y && a.ZZ == b.ZZ && a.ZZZ == b.ZZZ; };
        int fast = 0;
        for (int i = 0; i < 24; i++)
            for (int j = 0; j < 24; j++)
                for (int neg = 0; neg < 2; neg++) {
                    G1Xyzz ref = mult[i];
                    g1_add_affine_point<FpStd>(ref, aff[j], neg != 0);
                    G1Xyzz ref_eo = mult[i];
                    g1_add_affine_point<FpEo>(ref_eo, aff[j], neg != 0);
                    if (!bits_equal(ref, ref_eo)) { printf("FpEo curve formula differs (%d, %d)\n", i, j); bad++; }
                    // (i+1) +- (j+1) times G
                    int k = neg ? (i + 1) - (j + 1) : (i + 1) + (j + 1);
                    G1Xyzz want = G1Xyzz::inf();
                    if (k != 0) {
                        want = G1Xyzz::from_affine(P);
                        for (int m = 1; m < (k < 0 ? -k : k); m++) g1_add_affine_point(want, P, false);
                        if (k < 0) want.Y = Fp::neg(want.Y);
                    }
                    if (!same(ref, want)) { printf("mixed add (%d, %d, %d) wrong\n", i, j, neg); bad++; }
                    G1Xyzz acc = mult[i];
                    MaddPR t = madd_prep<FpStd>(acc, aff[j].x, cond_neg(aff[j].y, neg != 0));
                    MaddPR t_eo = madd_prep<FpEo>(acc, aff[j].x, cond_neg(aff[j].y, neg != 0));
                    if (acc.is_inf() || aff[j].is_inf() || t.P.is_zero()) continue;  // the general path's cases
                    fast++;
                    G1Xyzz acc_eo = acc;
                    madd_generic<FpStd>(acc, t);
                    madd_generic<FpEo>(acc_eo, t_eo);
                    if (!bits_equal(acc, ref) || !bits_equal(acc_eo, ref)) { printf("straight-line madd differs (%d, %d, %d)\n", i, j, neg); bad++; }
                }
        if (fast < 1000) { printf("straight-line madd exercised only %d times\n", fast); bad++; }
    }
    printf(bad ? "host field test: %d FAILURES\n" : "host field test: ok (%d failures)\n", bad);
    return bad != 0;
}
