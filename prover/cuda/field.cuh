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
FI uint32_t madc_lo(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
FI uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
FI uint32_t mul_lo(uint32_t a, uint32_t b) { uint32_t r; asm("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
FI uint32_t mul_hi(uint32_t a, uint32_t b) { uint32_t r; asm("mul.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
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
inline uint32_t madc_lo(uint32_t a, uint32_t b, uint32_t c) { return addc((uint32_t)((uint64_t)a * b), c); }
inline uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return addc((uint32_t)(((uint64_t)a * b) >> 32), c); }
inline uint32_t mul_lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
inline uint32_t mul_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
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

    // ---- even/odd Montgomery product (the layout of sppark's mont_t) ----------------------
    // Same result as mul(), bit for bit (checked on the host by cuda/test): a*b*R^-1 mod p for
    // a, b < p. The running sum T is kept as two arrays: `even` holds the products of a's
    // even limbs (position k in even[k]), `odd` those of a's odd limbs (position k+1 in
    // odd[k]). Each row then has two independent carry chains (one per array), which ptxas
    // can interleave (it maps PTX carries onto predicate registers), where mul() has one
    // chain per row half that depends on the previous one. After each row's reduction the
    // lowest limb is zero and dropped, so the arrays swap roles (the caller alternates them);
    // the array that becomes "odd" is realigned by two limbs inside the next row's
    // multiply-add (madc_n_rshift). No carry is lost: T < 2p + 2^33 p < 2^(32(N+1)) at every
    // point of a row, each array holds part of T, so neither array's chain can carry out of
    // position N (the top carries of the `even` chains go into odd[N-1], position N).
    // Requires N even (12 for Fp, 8 for Fr).
    FI static void eo_mul_n(uint32_t* acc, const uint32_t* a, uint32_t bi) {
        _Pragma("unroll") for (int j = 0; j < N; j += 2) { acc[j] = mul_lo(a[j], bi); acc[j + 1] = mul_hi(a[j], bi); }
    }
    FI static void eo_cmad_n(uint32_t* acc, const uint32_t* a, uint32_t bi) {
        acc[0] = mad_lo_cc(a[0], bi, acc[0]);
        acc[1] = madc_hi_cc(a[0], bi, acc[1]);
        _Pragma("unroll") for (int j = 2; j < N; j += 2) { acc[j] = madc_lo_cc(a[j], bi, acc[j]); acc[j + 1] = madc_hi_cc(a[j], bi, acc[j + 1]); }
    }
    // odd[j] = odd[j+2] + a[j]*bi (two-limb shift), continuing the incoming carry.
    FI static void eo_madc_n_rshift(uint32_t* odd, const uint32_t* a, uint32_t bi) {
        _Pragma("unroll") for (int j = 0; j < N - 2; j += 2) { odd[j] = madc_lo_cc(a[j], bi, odd[j + 2]); odd[j + 1] = madc_hi_cc(a[j], bi, odd[j + 3]); }
        odd[N - 2] = madc_lo_cc(a[N - 2], bi, 0);
        odd[N - 1] = madc_hi(a[N - 2], bi, 0);
    }
    // One row: T += a*bi, then T += m*p with m making limb 0 zero (a_odd = a + 1, p_odd = p + 1).
    FI static void eo_row(uint32_t* even, uint32_t* odd, const uint32_t* a, const uint32_t* a_odd, uint32_t bi,
                          const uint32_t* pm, const uint32_t* pm_odd, bool first) {
        if (first) {
            eo_mul_n(odd, a_odd, bi);
            eo_mul_n(even, a, bi);
        } else {
            even[0] = add_cc(even[0], odd[1]);
            eo_madc_n_rshift(odd, a_odd, bi);
            eo_cmad_n(even, a, bi);
            odd[N - 1] = addc(odd[N - 1], 0);
        }
        const uint32_t m = even[0] * P::INV;
        eo_cmad_n(odd, pm_odd, m);
        eo_cmad_n(even, pm, m);
        odd[N - 1] = addc(odd[N - 1], 0);
    }
    FI static Fe mul_eo(const Fe& a, const Fe& b) {
        static_assert(N % 2 == 0, "even/odd product needs an even limb count");
        uint32_t pm[N + 1], even[N], odd[N];
        _Pragma("unroll") for (int i = 0; i < N; i++) pm[i] = P::p(i);
        pm[N] = 0;
        uint32_t av[N + 1];
        _Pragma("unroll") for (int i = 0; i < N; i++) av[i] = a.v[i];
        av[N] = 0;
        _Pragma("unroll") for (int i = 0; i < N; i += 2) {
            eo_row(even, odd, av, av + 1, b.v[i], pm, pm + 1, i == 0);
            eo_row(odd, even, av, av + 1, b.v[i + 1], pm, pm + 1, false);
        }
        // T = even + odd shifted one limb (even[k] at position k, odd[k] at position k+1 after
        // the last row's shift); T < 2p < 2^(32N).
        uint32_t t[N];
        t[0] = add_cc(even[0], odd[1]);
        _Pragma("unroll") for (int k = 1; k < N - 1; k++) t[k] = addc_cc(even[k], odd[k + 1]);
        t[N - 1] = addc(even[N - 1], 0);
        Fe s, r;
        s.v[0] = sub_cc(t[0], P::p(0));
        _Pragma("unroll") for (int i = 1; i < N; i++) s.v[i] = subc_cc(t[i], P::p(i));
        uint32_t borrow = subc(0, 0);
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : s.v[i];
        return r;
    }
    FI static Fe sqr_eo(const Fe& a) { return mul_eo(a, a); }

    // -a without a branch (0 stays 0), for straight-line curve formulas.
    FI static Fe neg_ct(const Fe& a) {
        Fe r;
        r.v[0] = sub_cc(P::p(0), a.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) r.v[i] = subc_cc(P::p(i), a.v[i]);
        const bool z = a.is_zero();
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = z ? 0u : r.v[i];
        return r;
    }

    // Montgomery form -> canonical integer (a * R^-1).
    FI static Fe from_mont(const Fe& a) {
        Fe one_int = zero();
        one_int.v[0] = 1;
        return mul(a, one_int);
    }
};

typedef Fe<FpParams> Fp;
typedef Fe<FrParams> Fr;
