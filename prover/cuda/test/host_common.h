// Helpers shared by the host tests of the CUDA code (host_field_test.cpp, host_msm_test.cpp):
// Fp elements from 64-bit limbs, inverses by Fermat, and the BLS12-381 generators in
// Montgomery form (blst's BLS12_381_G1 / BLS12_381_G2 constants). Include after curve.cuh.
#pragma once

static Fp fp_limbs(const uint64_t w[6]) {
    Fp r;
    for (int i = 0; i < 6; i++) { r.v[2 * i] = (uint32_t)w[i]; r.v[2 * i + 1] = (uint32_t)(w[i] >> 32); }
    return r;
}

static Fp inv(const Fp& a) {  // a^(p-2)
    Fp r = Fp::one();
    for (int i = 11; i >= 0; i--) {
        uint32_t e = FpParams::p(i) - (i == 0 ? 2u : 0u);
        for (int b = 31; b >= 0; b--) {
            r = Fp::sqr(r);
            if ((e >> b) & 1) r = Fp::mul(r, a);
        }
    }
    return r;
}

static Fp2 inv(const Fp2& a) {  // (a0 - a1 u) / (a0^2 + a1^2)
    const Fp d = inv(Fp::add(Fp::sqr(a.c0), Fp::sqr(a.c1)));
    Fp2 r;
    r.c0 = Fp::mul(a.c0, d);
    r.c1 = Fp::neg(Fp::mul(a.c1, d));
    return r;
}

static G1Affine g1_generator() {
    const uint64_t x[6] = {0x5cb38790fd530c16, 0x7817fc679976fff5, 0x154f95c7143ba1c1,
                           0xf0ae6acdf3d0e747, 0xedce6ecc21dbf440, 0x120177419e0bfb75};
    const uint64_t y[6] = {0xbaac93d50ce72271, 0x8c22631a7918fd8e, 0xdd595f13570725ce,
                           0x51ac582950405194, 0x0e1c8c3fad0059c0, 0x0bbc3efc5008a26a};
    G1Affine g;
    g.x = fp_limbs(x);
    g.y = fp_limbs(y);
    return g;
}

static G2Affine g2_generator() {
    const uint64_t x0[6] = {0xf5f28fa202940a10, 0xb3f5fb2687b4961a, 0xa1a893b53e2ae580,
                            0x9894999d1a3caee9, 0x6f67b7631863366b, 0x058191924350bcd7};
    const uint64_t x1[6] = {0xa5a9c0759e23f606, 0xaaa0c59dbccd60c3, 0x3bb17e18e2867806,
                            0x1b1ab6cc8541b367, 0xc2b6ed0ef2158547, 0x11922a097360edf3};
    const uint64_t y0[6] = {0x4c730af860494c4a, 0x597cfa1f5e369c5a, 0xe7e6856caa0a635a,
                            0xbbefb5e96e0d495f, 0x07d3a975f0ef25a2, 0x0083fd8e7e80dae5};
    const uint64_t y1[6] = {0xadc0fc92df64b05d, 0x18aa270a2b1461dc, 0x86adac6a3be4eba0,
                            0x79495c4ec93da33a, 0xe7175850a43ccaed, 0x0b2bc2a163de1bf2};
    G2Affine g;
    g.x.c0 = fp_limbs(x0); g.x.c1 = fp_limbs(x1);
    g.y.c0 = fp_limbs(y0); g.y.c1 = fp_limbs(y1);
    return g;
}
