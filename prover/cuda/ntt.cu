// Fr NTT kernels for the H computation of Groth16 (natural order in and out).
//
// Forward and inverse transforms are decimation-in-frequency (Gentleman-Sande) passes that
// each run up to 10 radix-2 stages inside shared memory, followed by one bit-reversal pass
// that also applies a per-element scale (n^-1, coset powers g^j or both), so that ifft,
// coset scaling and the final permutation cost one pass over memory. The bit reversal exists
// as one thread per element (`ntt_bitrev_scale`, any size) and through a shared-memory tile
// (`ntt_bitrev_tile`, 2^10 and up, coalesced both ways); PROOFSCOPE_NTT_BITREV picks it. The pointwise
// (a*b - c) * Z^-1 step of the quotient lives here too.
//
// Every kernel exists twice, from one template over the Fr product: the plain name uses the
// CIOS `Fr::mul`, the `_eo` name the even/odd `Fr::mul_eo` (same result bit for bit; the
// even/odd product made the MSM's bucket sums 1.8x faster on the H200). The host picks the
// set with PROOFSCOPE_NTT_MUL=cios|eo (prover/src/gpu/ntt.rs); `gpu bench` times both.
// The DIF pass also exists two stages per step (`ntt_dif_pass_r4`, `_r4_eo`, same output bit for
// bit), picked with PROOFSCOPE_NTT_RADIX=2|4; `gpu check` and `gpu bench` run both.
#include "field.cuh"

struct FrCios {
    FI static Fr mul(const Fr& a, const Fr& b) { return Fr::mul(a, b); }
};
struct FrEo {
    FI static Fr mul(const Fr& a, const Fr& b) { return Fr::mul_eo(a, b); }
};

// Where a DIF pass block's tile lives: G groups of 2^k elements with stride s = 2^log_s
// starting at `base`; shared slot idx holds element idx >> log_g of lane idx & (G - 1).
// Both pass kernels (radix 2 and 4) load and store their tile through it.
struct PassTile {
    uint32_t G, E, log_g, log_s;
    uint64_t low0, base;
    FI PassTile(uint32_t lam0, uint32_t k, uint32_t lg) {
        log_g = lg;
        G = 1u << lg;
        E = (1u << k) << lg;
        log_s = lam0 + 1 - k;
        const uint64_t s = 1ull << log_s;
        const uint64_t q0 = (uint64_t)blockIdx.x << lg;  // first group of this block
        low0 = q0 & (s - 1);
        base = ((q0 >> log_s) << (log_s + k)) + low0;
    }
    FI uint64_t at(uint32_t idx) const { return base + ((uint64_t)(idx >> log_g) << log_s) + (idx & (G - 1)); }
    FI void load(Fr* sh, const Fr* data, uint32_t tid, uint32_t T) const {
        for (uint32_t idx = tid; idx < E; idx += T) sh[idx] = data[at(idx)];
    }
    FI void store(Fr* data, const Fr* sh, uint32_t tid, uint32_t T) const {
        for (uint32_t idx = tid; idx < E; idx += T) data[at(idx)] = sh[idx];
    }
};

// DIF pass over `data` (n = 2^log_n elements): stages of half-size 2^lam0 .. 2^(lam0-k+1).
// Each block owns G groups of 2^k elements with stride s = 2^(lam0-k+1) (G <= s), so that
// G consecutive lanes read consecutive addresses. tw[j] = w^j for j < n/2.
template <class M>
FI void ntt_dif_pass_t(Fr* data, const Fr* __restrict__ tw, uint32_t log_n,
                       uint32_t lam0, uint32_t k, uint32_t log_g) {
    extern __shared__ Fr sh[];
    const PassTile tile(lam0, k, log_g);
    const uint32_t G = tile.G, log_s = tile.log_s;
    const uint64_t low0 = tile.low0;
    const uint32_t T = tile.E >> 1;
    const uint32_t tid = threadIdx.x;
    tile.load(sh, data, tid, T);
    __syncthreads();
    const uint32_t lane = tid & (G - 1);
    const uint32_t bf = tid >> log_g;
    for (uint32_t t = 0; t < k; t++) {
        const uint32_t log_hl = k - 1 - t;
        const uint32_t hl = 1u << log_hl;
        const uint32_t lam = lam0 - t;
        const uint32_t e0 = ((bf >> log_hl) << (log_hl + 1)) | (bf & (hl - 1));
        const uint32_t e1 = e0 + hl;
        const uint64_t j = low0 + lane + ((uint64_t)(e0 & (hl - 1)) << log_s);
        const Fr w = tw[j << (log_n - 1 - lam)];
        const Fr x = sh[(e0 << log_g) | lane];
        const Fr y = sh[(e1 << log_g) | lane];
        sh[(e0 << log_g) | lane] = Fr::add(x, y);
        sh[(e1 << log_g) | lane] = M::mul(Fr::sub(x, y), w);
        __syncthreads();
    }
    tile.store(data, sh, tid, T);
}

// The same DIF pass two stages per step (radix 4, PROOFSCOPE_NTT_RADIX=4): blockDim.x =
// max(E/4, 1). Each thread of a step owns the 4 elements e0, e0+h/2, e0+h, e0+3h/2 of one
// lane (h = the first stage's half-length), keeps them in registers through both stages
// (the first stage's butterflies (e0, e0+h) and (e0+h/2, e0+3h/2), then the second's
// (e0, e0+h/2) and (e0+h, e0+3h/2), same twiddles, same add/sub/mul per butterfly as
// ntt_dif_pass_t, so the output is identical bit for bit) and syncs once per two stages.
// An odd stage count ends with one radix-2 step (each thread 2 butterflies, 1 when k = 1).
template <class M>
FI void ntt_dif_pass_r4_t(Fr* data, const Fr* __restrict__ tw, uint32_t log_n,
                          uint32_t lam0, uint32_t k, uint32_t log_g) {
    extern __shared__ Fr sh[];
    const PassTile tile(lam0, k, log_g);
    const uint32_t G = tile.G, log_s = tile.log_s;
    const uint64_t low0 = tile.low0;
    const uint32_t T = blockDim.x, E = tile.E;
    const uint32_t tid = threadIdx.x;
    tile.load(sh, data, tid, T);
    __syncthreads();
    uint32_t t = 0;
    // Radix-4 steps: E/4 = T groups of 4 (k >= 2 here, so one group per thread).
    for (; t + 2 <= k; t += 2) {
        const uint32_t lane = tid & (G - 1);
        const uint32_t g = tid >> log_g;
        const uint32_t log_hl = k - 1 - t;  // >= 1
        const uint32_t h = 1u << log_hl;
        const uint32_t qh = h >> 1;
        const uint32_t lam = lam0 - t;
        const uint32_t r = g & (qh - 1);
        const uint32_t e0 = ((g >> (log_hl - 1)) << (log_hl + 1)) | r;
        const uint64_t j0 = low0 + lane + ((uint64_t)r << log_s);
        const uint64_t j1 = low0 + lane + ((uint64_t)(r + qh) << log_s);
        const Fr wa = tw[j0 << (log_n - 1 - lam)];
        const Fr wb = tw[j1 << (log_n - 1 - lam)];
        const Fr w2 = tw[j0 << (log_n - lam)];
        const uint32_t i0 = (e0 << log_g) | lane;
        const uint32_t i1 = ((e0 + qh) << log_g) | lane;
        const uint32_t i2 = ((e0 + h) << log_g) | lane;
        const uint32_t i3 = ((e0 + h + qh) << log_g) | lane;
        Fr x0 = sh[i0], x1 = sh[i1], x2 = sh[i2], x3 = sh[i3];
        // Stage t: (e0, e0+h) and (e0+h/2, e0+3h/2).
        Fr y = Fr::sub(x0, x2);
        x0 = Fr::add(x0, x2);
        x2 = M::mul(y, wa);
        y = Fr::sub(x1, x3);
        x1 = Fr::add(x1, x3);
        x3 = M::mul(y, wb);
        // Stage t+1: (e0, e0+h/2) and (e0+h, e0+3h/2), both with twiddle index r.
        y = Fr::sub(x0, x1);
        x0 = Fr::add(x0, x1);
        x1 = M::mul(y, w2);
        y = Fr::sub(x2, x3);
        x2 = Fr::add(x2, x3);
        x3 = M::mul(y, w2);
        sh[i0] = x0;
        sh[i1] = x1;
        sh[i2] = x2;
        sh[i3] = x3;
        __syncthreads();
    }
    if (t < k) {  // the last stage (half-length 1) as one radix-2 step
        const uint32_t lam = lam0 - t;
        for (uint32_t b = tid; b < (E >> 1); b += T) {
            const uint32_t lane = b & (G - 1);
            const uint32_t e0 = (b >> log_g) << 1;
            const uint64_t j = low0 + lane;
            const Fr w = tw[j << (log_n - 1 - lam)];
            const uint32_t i0 = (e0 << log_g) | lane;
            const uint32_t i1 = ((e0 + 1) << log_g) | lane;
            const Fr x = sh[i0];
            const Fr y = sh[i1];
            sh[i0] = Fr::add(x, y);
            sh[i1] = M::mul(Fr::sub(x, y), w);
        }
        __syncthreads();
    }
    tile.store(data, sh, tid, T);
}

// out[rev(i)] = in[i] * scale(rev(i)), scale(j) = hi[j >> 12] * lo[j & 4095] when `scaled`.
template <class M>
FI void ntt_bitrev_scale_t(const Fr* __restrict__ in, Fr* __restrict__ out, uint32_t log_n,
                           const Fr* __restrict__ hi, const Fr* __restrict__ lo, uint32_t scaled) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1ull << log_n)) return;
    uint32_t j = log_n == 0 ? 0 : (__brev((uint32_t)i) >> (32 - log_n));
    Fr x = in[i];
    if (scaled) {
        const Fr h = hi[j >> 12], l = lo[j & 4095];
        x = M::mul(x, M::mul(h, l));
    }
    out[j] = x;
}

// The same permutation and scale through a 32x32 tile in shared memory, for log_n >= 10
// (PROOFSCOPE_NTT_BITREV=tile, the default). Write i = (a, m, c) with a the top 5 bits, c the
// bottom 5 and m the log_n - 10 bits between: rev(i) = (rev5(c), rev(m), rev5(a)). Block m
// loads the 32 rows a of 32 consecutive c (1 KB each, coalesced) and stores the 32 rows
// rev5(c) of 32 consecutive rev5(a) (coalesced too), where the plain kernel scatters every
// 32-byte element to its own line. The tile's columns are XOR-swizzled by (row >> 2) so that
// the column-wise reads of the store phase spread over the banks.
template <class M>
FI void ntt_bitrev_tile_t(const Fr* __restrict__ in, Fr* __restrict__ out, uint32_t log_n,
                          const Fr* __restrict__ hi, const Fr* __restrict__ lo, uint32_t scaled) {
    __shared__ Fr sh[32 * 32];
    const uint32_t mid = log_n - 10;
    const uint64_t m = blockIdx.x;
    const uint64_t m_rev = mid == 0 ? 0 : (uint64_t)(__brev((uint32_t)m) >> (32 - mid));
    for (uint32_t idx = threadIdx.x; idx < 1024; idx += blockDim.x) {
        const uint32_t a = idx >> 5, c = idx & 31;
        sh[(a << 5) | (c ^ ((a >> 2) & 7))] = in[((uint64_t)a << (log_n - 5)) | (m << 5) | c];
    }
    __syncthreads();
    for (uint32_t idx = threadIdx.x; idx < 1024; idx += blockDim.x) {
        const uint32_t r = idx >> 5, q = idx & 31;  // output row rev5(c), column rev5(a)
        const uint32_t a = __brev(q) >> 27, c = __brev(r) >> 27;
        Fr x = sh[(a << 5) | (c ^ ((a >> 2) & 7))];
        const uint64_t j = ((uint64_t)r << (log_n - 5)) | (m_rev << 5) | q;
        if (scaled) {
            const Fr h = hi[j >> 12], l = lo[j & 4095];
            x = M::mul(x, M::mul(h, l));
        }
        out[j] = x;
    }
}

// out[i] = hi[i >> 12] * lo[i & 4095] for i < count (twiddle tables, coset powers).
template <class M>
FI void fr_powers_t(Fr* out, uint64_t count, const Fr* __restrict__ hi, const Fr* __restrict__ lo) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const Fr h = hi[i >> 12], l = lo[i & 4095];
    out[i] = M::mul(h, l);
}

// a[i] = (a[i] * b[i] - c[i]) * zinv: the quotient by Z = x^n - 1 on the coset.
template <class M>
FI void fr_abc_div_z_t(Fr* a, const Fr* __restrict__ b, const Fr* __restrict__ c,
                       const Fr* __restrict__ zinv, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr x = a[i], y = b[i], z = c[i], zi = zinv[0];
    a[i] = M::mul(Fr::sub(M::mul(x, y), z), zi);
}

// data[i] *= hi[i >> 12] * lo[i & 4095]: input-side coset scaling.
template <class M>
FI void fr_scale_powers_t(Fr* data, uint64_t n, const Fr* __restrict__ hi, const Fr* __restrict__ lo) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr x = data[i], h = hi[i >> 12], l = lo[i & 4095];
    data[i] = M::mul(x, M::mul(h, l));
}

// Entry points: CIOS product (plain names) and even/odd product (`_eo`).
#define NTT_ENTRIES(SUF, M)                                                                                         \
    extern "C" __global__ void ntt_dif_pass##SUF(Fr* data, const Fr* __restrict__ tw, uint32_t log_n,                 \
                                                 uint32_t lam0, uint32_t k, uint32_t log_g) {                         \
        ntt_dif_pass_t<M>(data, tw, log_n, lam0, k, log_g);                                                            \
    }                                                                                                                  \
    extern "C" __global__ void ntt_dif_pass_r4##SUF(Fr* data, const Fr* __restrict__ tw, uint32_t log_n,              \
                                                    uint32_t lam0, uint32_t k, uint32_t log_g) {                      \
        ntt_dif_pass_r4_t<M>(data, tw, log_n, lam0, k, log_g);                                                         \
    }                                                                                                                  \
    extern "C" __global__ void ntt_bitrev_scale##SUF(const Fr* __restrict__ in, Fr* __restrict__ out, uint32_t log_n, \
                                                     const Fr* __restrict__ hi, const Fr* __restrict__ lo,            \
                                                     uint32_t scaled) {                                               \
        ntt_bitrev_scale_t<M>(in, out, log_n, hi, lo, scaled);                                                         \
    }                                                                                                                  \
    extern "C" __global__ void ntt_bitrev_tile##SUF(const Fr* __restrict__ in, Fr* __restrict__ out, uint32_t log_n,  \
                                                    const Fr* __restrict__ hi, const Fr* __restrict__ lo,             \
                                                    uint32_t scaled) {                                                \
        ntt_bitrev_tile_t<M>(in, out, log_n, hi, lo, scaled);                                                          \
    }                                                                                                                  \
    extern "C" __global__ void fr_powers##SUF(Fr* out, uint64_t count, const Fr* __restrict__ hi,                     \
                                              const Fr* __restrict__ lo) {                                            \
        fr_powers_t<M>(out, count, hi, lo);                                                                            \
    }                                                                                                                  \
    extern "C" __global__ void fr_abc_div_z##SUF(Fr* a, const Fr* __restrict__ b, const Fr* __restrict__ c,           \
                                                 const Fr* __restrict__ zinv, uint64_t n) {                           \
        fr_abc_div_z_t<M>(a, b, c, zinv, n);                                                                           \
    }                                                                                                                  \
    extern "C" __global__ void fr_scale_powers##SUF(Fr* data, uint64_t n, const Fr* __restrict__ hi,                  \
                                                    const Fr* __restrict__ lo) {                                      \
        fr_scale_powers_t<M>(data, n, hi, lo);                                                                         \
    }
NTT_ENTRIES(, FrCios)
NTT_ENTRIES(_eo, FrEo)
