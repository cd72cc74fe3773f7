// BLS12-381 base field Fp (381 bits, 12 x 32-bit limbs) and scalar field Fr (255 bits,
// 8 x 32-bit limbs) in Montgomery form, R = 2^(32N): the very representation blst/blstrs
// keep in memory (little-endian limbs), so host buffers are uploaded without conversion.
//
// Why this file exists: every kernel (NTT, MSM, self-tests) is built on these few
// operations. The multiply is CIOS Montgomery with explicit PTX carry chains
// (mad.lo.cc / madc.hi.cc / addc), which is what the GPU's integer units execute best.
// Compiled for the host (no __CUDA_ARCH__), the carry primitives are emulated in C++ so the
// same arithmetic can be unit-tested on a machine without a GPU (see cuda/test/).
#pragma once
#include <stdint.h>

#ifndef __CUDACC__
#define __device__
#define __host__
#define __forceinline__ inline
#define __constant__
#endif

#define FI __device__ __forceinline__

// ---- carry-chain primitives -------------------------------------------------------------
#if defined(__CUDA_ARCH__)
FI uint32_t add_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t addc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t addc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t sub_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t subc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t subc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
FI uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
FI uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
FI uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
#else
// Host emulation: one carry flag, exactly the PTX semantics.
static thread_local uint32_t emu_cc = 0;
inline uint32_t add_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b; emu_cc = (uint32_t)(s >> 32); return (uint32_t)s; }
inline uint32_t addc_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b + emu_cc; emu_cc = (uint32_t)(s >> 32); return (uint32_t)s; }
inline uint32_t addc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a + b + emu_cc); }
inline uint32_t sub_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a - b; emu_cc = (uint32_t)(s >> 63); return (uint32_t)s; }
inline uint32_t subc_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a - b - emu_cc; emu_cc = (uint32_t)(s >> 63); return (uint32_t)s; }
inline uint32_t subc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a - b - emu_cc); }
inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc((uint32_t)((uint64_t)a * b), c); }
inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc((uint32_t)((uint64_t)a * b), c); }
inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
#endif

// ---- moduli ---------------------------------------------------------------------------------
struct FpParams {
    static constexpr int N = 12;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    FI static uint32_t p(int i) {
        switch (i) {
        case 0: return 0xffffaaabu; case 1: return 0xb9feffffu; case 2: return 0xb153ffffu; case 3: return 0x1eabfffeu;
        case 4: return 0xf6b0f624u; case 5: return 0x6730d2a0u; case 6: return 0xf38512bfu; case 7: return 0x64774b84u;
        case 8: return 0x434bacd7u; case 9: return 0x4b1ba7b6u; case 10: return 0x397fe69au; default: return 0x1a0111eau;
        }
    }
    FI static uint32_t one(int i) {  // R mod p
        switch (i) {
        case 0: return 0x0002fffdu; case 1: return 0x76090000u; case 2: return 0xc40c0002u; case 3: return 0xebf4000bu;
        case 4: return 0x53c758bau; case 5: return 0x5f489857u; case 6: return 0x70525745u; case 7: return 0x77ce5853u;
        case 8: return 0xa256ec6du; case 9: return 0x5c071a97u; case 10: return 0xfa80e493u; default: return 0x15f65ec3u;
        }
    }
};

struct FrParams {
    static constexpr int N = 8;
    static constexpr uint32_t INV = 0xffffffffu;
    FI static uint32_t p(int i) {
        switch (i) {
        case 0: return 0x00000001u; case 1: return 0xffffffffu; case 2: return 0xfffe5bfeu; case 3: return 0x53bda402u;
        case 4: return 0x09a1d805u; case 5: return 0x3339d808u; case 6: return 0x299d7d48u; default: return 0x73eda753u;
        }
    }
    FI static uint32_t one(int i) {
        switch (i) {
        case 0: return 0xfffffffeu; case 1: return 0x00000001u; case 2: return 0x00034802u; case 3: return 0x5884b7fau;
        case 4: return 0xecbc4ff5u; case 5: return 0x998c4fefu; case 6: return 0xacc5056fu; default: return 0x1824b159u;
        }
    }
};

// ---- the field element ------------------------------------------------------------------------
// 16-byte aligned so that loads and stores of elements, points and buckets are 128-bit
// vector accesses (LDG/STG/LDS.128) instead of 32-bit ones.
template <class P>
struct alignas(16) Fe {
    static constexpr int N = P::N;
    uint32_t v[N];

    FI static Fe zero() { Fe r; _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = 0; return r; }
    FI static Fe one() { Fe r; _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = P::one(i); return r; }

    FI bool is_zero() const {
        uint32_t acc = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    FI bool operator==(const Fe& o) const {
        uint32_t acc = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }

    // r = a + b mod p (inputs < p).
    FI static Fe add(const Fe& a, const Fe& b) {
        Fe s, t;
        s.v[0] = add_cc(a.v[0], b.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) s.v[i] = addc_cc(a.v[i], b.v[i]);
        // p < 2^(32N-1) for both fields, so no carry out of the top limb.
        t.v[0] = sub_cc(s.v[0], P::p(0));
        _Pragma("unroll") for (int i = 1; i < N; i++) t.v[i] = subc_cc(s.v[i], P::p(i));
        uint32_t borrow = subc(0, 0);  // 0 or 0xffffffff
        Fe r;
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = borrow ? s.v[i] : t.v[i];
        return r;
    }

    // r = a - b mod p.
    FI static Fe sub(const Fe& a, const Fe& b) {
        Fe s;
        s.v[0] = sub_cc(a.v[0], b.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) s.v[i] = subc_cc(a.v[i], b.v[i]);
        uint32_t borrow = subc(0, 0);
        uint32_t mask = borrow;  // add p back when it borrowed
        Fe r;
        r.v[0] = add_cc(s.v[0], P::p(0) & mask);
        _Pragma("unroll") for (int i = 1; i < N; i++) r.v[i] = addc_cc(s.v[i], P::p(i) & mask);
        return r;
    }

    FI static Fe dbl(const Fe& a) { return add(a, a); }

    FI static Fe neg(const Fe& a) {
        if (a.is_zero()) return a;
        Fe r;
        r.v[0] = sub_cc(P::p(0), a.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) r.v[i] = subc_cc(P::p(i), a.v[i]);
        return r;
    }

    // Montgomery product a*b*R^-1 mod p: CIOS, one PTX carry chain for the low halves and
    // one for the high halves of each row, then the same for the reduction row.
    FI static Fe mul(const Fe& a, const Fe& b) {
        uint32_t t[N + 2];
        _Pragma("unroll") for (int i = 0; i < N + 2; i++) t[i] = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            t[0] = mad_lo_cc(a.v[0], bi, t[0]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j] = madc_lo_cc(a.v[j], bi, t[j]);
            t[N] = addc_cc(t[N], 0);
            t[N + 1] = addc(t[N + 1], 0);
            t[1] = mad_hi_cc(a.v[0], bi, t[1]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(a.v[j], bi, t[j + 1]);
            t[N + 1] = addc(t[N + 1], 0);

            const uint32_t m = t[0] * P::INV;
            t[0] = mad_lo_cc(P::p(0), m, t[0]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j] = madc_lo_cc(P::p(j), m, t[j]);
            t[N] = addc_cc(t[N], 0);
            t[N + 1] = addc(t[N + 1], 0);
            t[1] = mad_hi_cc(P::p(0), m, t[1]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(P::p(j), m, t[j + 1]);
            t[N + 1] = addc(t[N + 1], 0);

            _Pragma("unroll") for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        // t < 2p: one conditional subtraction (t[N] is 0 since 2p < 2^(32N)).
        Fe s, r;
        s.v[0] = sub_cc(t[0], P::p(0));
        _Pragma("unroll") for (int i = 1; i < N; i++) s.v[i] = subc_cc(t[i], P::p(i));
        uint32_t borrow = subc(t[N], 0);
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : s.v[i];
        return r;
    }

    FI static Fe sqr(const Fe& a) { return mul(a, a); }

    // Montgomery form -> canonical integer (a * R^-1).
    FI static Fe from_mont(const Fe& a) {
        Fe one_int = zero();
        one_int.v[0] = 1;
        return mul(a, one_int);
    }
};

typedef Fe<FpParams> Fp;
typedef Fe<FrParams> Fr;
