// Host build of field.cuh/g1.cuh with emulated PTX carry chains: algebraic identities on
// random inputs, so carry-chain mistakes show up on a machine without a GPU.
// Build and run: scripts/host-field-test.sh
#include "../g1.cuh"
#include <cstdio>
#include <random>

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

int main() {
    std::mt19937_64 g(42);
    int bad = check_field<Fr>("Fr", g, 20000) + check_field<Fp>("Fp", g, 20000);
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
    printf(bad ? "host field test: %d FAILURES\n" : "host field test: ok (%d failures)\n", bad);
    return bad != 0;
}
