// Fr NTT kernels for the H computation of Groth16 (natural order in and out).
//
// Forward and inverse transforms are decimation-in-frequency (Gentleman-Sande) passes that
// each run up to 10 radix-2 stages inside shared memory, followed by one bit-reversal pass
// that also applies a per-element scale (n^-1, coset powers g^j or both), so that ifft,
// coset scaling and the final permutation cost one pass over memory. The bit reversal exists
// as one thread per element (`ntt_bitrev_scale`, any size) and through a shared-memory tile
// (`ntt_bitrev_tile`, 2^10 and up, coalesced both ways), or not at all: `ntt_dif_last_bitrev` runs the
// last 8 stages on 4 chunks per block whose outputs are neighbours, and stores them permuted and
// scaled (2^10 and up, one pass over memory less); PROOFSCOPE_NTT_BITREV picks it. The pointwise
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
    // Shared slot of element e of lane `lane`, and the twiddle index of the lane's element 0.
    FI uint32_t slot(uint32_t e, uint32_t lane) const { return (e << log_g) | lane; }
    FI uint64_t tw0(uint32_t lane) const { return low0 + lane; }
    FI void load(Fr* sh, const Fr* data, uint32_t tid, uint32_t T) const {
        for (uint32_t idx = tid; idx < E; idx += T) sh[idx] = data[at(idx)];
    }
    FI void store(Fr* data, const Fr* sh, uint32_t tid, uint32_t T) const {
        for (uint32_t idx = tid; idx < E; idx += T) data[at(idx)] = sh[idx];
    }
};

// Where a DIF step reads its twiddles w^i (i < n/2). `TwTable`: a resident table of n/2
// powers (n·16 bytes; 2 GiB a direction at 2^27). `TwTwoLevel` (the lean NTT, for devices
// that cannot hold the tables): w^i = hi[i >> 12] * lo[i & 4095] from two small tables
// (n/2/4096 + 4096 powers: 0.6 MiB at 2^27), one product more per twiddle, same value.
struct TwTable {
    const Fr* __restrict__ t;
    FI Fr operator()(uint64_t i) const { return t[i]; }
};
template <class M>
struct TwTwoLevel {
    const Fr* __restrict__ hi;
    const Fr* __restrict__ lo;
    FI Fr operator()(uint64_t i) const { return M::mul(hi[i >> 12], lo[i & 4095]); }
};

FI uint64_t rev_bits(uint64_t x, uint32_t bits) { return bits == 0 ? 0 : __brevll(x) >> (64 - bits); }

// The tile of the last DIF pass fused with the bit reversal (PROOFSCOPE_NTT_BITREV=fused,
// log_n >= 10): the stages of half-size 2^(k-1) .. 1 over chunks of 2^k contiguous elements.
// A block owns G = 2^log_g chunks, chunk m_g = rev_U(blockIdx.x * G + g) with U = log_n - k, so
// that element e of chunk m_g, whose final place is rev(m_g 2^k + e) = rev_k(e) 2^U + blockIdx.x G + g,
// lands beside the same element of the block's other chunks: loads read whole chunks, stores
// write rows of G neighbours (G = 4: 128 bytes). Lanes are the chunks; each chunk's twiddles
// are those of stride 1 (no lane offset). Slots are XOR-swizzled by e so that the loads (one
// chunk, consecutive e) and the stores (one e, consecutive chunks) both spread over the banks.
struct ChunkTile {
    uint32_t G, E, log_g, log_s, k, U;
    uint64_t col0;  // output column of chunk 0
    FI ChunkTile(uint32_t log_n, uint32_t k_, uint32_t lg) {
        k = k_;
        log_g = lg;
        G = 1u << lg;
        E = (1u << k) << lg;
        log_s = 0;
        U = log_n - k;
        col0 = (uint64_t)blockIdx.x << lg;
    }
    FI uint32_t slot(uint32_t e, uint32_t g) const { return (e << log_g) | (g ^ (e & (G - 1))); }
    FI uint64_t tw0(uint32_t) const { return 0; }
    FI void load(Fr* sh, const Fr* __restrict__ in, uint32_t tid, uint32_t T) const {
        const uint32_t mask = (1u << k) - 1;
        for (uint32_t idx = tid; idx < E; idx += T) {
            const uint32_t g = idx >> k, e = idx & mask;
            sh[slot(e, g)] = in[(rev_bits(col0 + g, U) << k) | e];
        }
    }
    // out[rev(i)] = x_i * scale(rev(i)) as in ntt_bitrev_scale_t.
    template <class M>
    FI void store(Fr* __restrict__ out, const Fr* sh, uint32_t tid, uint32_t T, const Fr* __restrict__ hi,
                  const Fr* __restrict__ lo, uint32_t scaled) const {
        for (uint32_t idx = tid; idx < E; idx += T) {
            const uint32_t g = idx & (G - 1), r = idx >> log_g;
            Fr x = sh[slot((uint32_t)rev_bits(r, k), g)];
            const uint64_t j = ((uint64_t)r << U) | (col0 + g);
            if (scaled) {
                const Fr h = hi[j >> 12], l = lo[j & 4095];
                x = M::mul(x, M::mul(h, l));
            }
            out[j] = x;
        }
    }
};

// The DIF stages of one pass inside shared memory, one radix-2 stage per step (blockDim.x =
// E/2, each thread one butterfly per stage): stages of half-size 2^lam0 .. 2^(lam0-k+1) over the
// tile's G lanes of 2^k elements (element e of lane `lane` in slot tile.slot(e, lane), global
// stride 2^tile.log_s). tw(j) = w^j for j < n/2.
template <class M, class Tile, class TW>
FI void dif_steps_r2(Fr* sh, const Tile& tile, const TW& tw, uint32_t log_n, uint32_t lam0, uint32_t k,
                     uint32_t tid) {
    const uint32_t log_g = tile.log_g, log_s = tile.log_s;
    const uint32_t lane = tid & (tile.G - 1);
    const uint32_t bf = tid >> log_g;
    for (uint32_t t = 0; t < k; t++) {
        const uint32_t log_hl = k - 1 - t;
        const uint32_t hl = 1u << log_hl;
        const uint32_t lam = lam0 - t;
        const uint32_t e0 = ((bf >> log_hl) << (log_hl + 1)) | (bf & (hl - 1));
        const uint32_t e1 = e0 + hl;
        const uint64_t j = tile.tw0(lane) + ((uint64_t)(e0 & (hl - 1)) << log_s);
        const Fr w = tw(j << (log_n - 1 - lam));
        const uint32_t i0 = tile.slot(e0, lane), i1 = tile.slot(e1, lane);
        const Fr x = sh[i0];
        const Fr y = sh[i1];
        sh[i0] = Fr::add(x, y);
        sh[i1] = M::mul(Fr::sub(x, y), w);
        __syncthreads();
    }
}

// The same stages two per step (radix 4, PROOFSCOPE_NTT_RADIX=4): blockDim.x = T = max(E/4, 1).
// Each thread of a step owns the 4 elements e0, e0+h/2, e0+h, e0+3h/2 of one lane (h = the
// first stage's half-length), keeps them in registers through both stages (the first stage's
// butterflies (e0, e0+h) and (e0+h/2, e0+3h/2), then the second's (e0, e0+h/2) and
// (e0+h, e0+3h/2), same twiddles, same add/sub/mul per butterfly as dif_steps_r2, so the
// output is identical bit for bit) and syncs once per two stages. An odd stage count ends
// with one radix-2 step (each thread 2 butterflies, 1 when k = 1).
template <class M, class Tile, class TW>
FI void dif_steps_r4(Fr* sh, const Tile& tile, const TW& tw, uint32_t log_n, uint32_t lam0, uint32_t k,
                     uint32_t tid, uint32_t T) {
    const uint32_t G = tile.G, log_g = tile.log_g, log_s = tile.log_s;
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
        const uint64_t j0 = tile.tw0(lane) + ((uint64_t)r << log_s);
        const uint64_t j1 = tile.tw0(lane) + ((uint64_t)(r + qh) << log_s);
        const Fr wa = tw(j0 << (log_n - 1 - lam));
        const Fr wb = tw(j1 << (log_n - 1 - lam));
        const Fr w2 = tw(j0 << (log_n - lam));
        const uint32_t i0 = tile.slot(e0, lane);
        const uint32_t i1 = tile.slot(e0 + qh, lane);
        const uint32_t i2 = tile.slot(e0 + h, lane);
        const uint32_t i3 = tile.slot(e0 + h + qh, lane);
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
        for (uint32_t b = tid; b < (tile.E >> 1); b += T) {
            const uint32_t lane = b & (G - 1);
            const uint32_t e0 = (b >> log_g) << 1;
            const uint64_t j = tile.tw0(lane);
            const Fr w = tw(j << (log_n - 1 - lam));
            const uint32_t i0 = tile.slot(e0, lane);
            const uint32_t i1 = tile.slot(e0 + 1, lane);
            const Fr x = sh[i0];
            const Fr y = sh[i1];
            sh[i0] = Fr::add(x, y);
            sh[i1] = M::mul(Fr::sub(x, y), w);
        }
        __syncthreads();
    }
}

// DIF pass over `data` (n = 2^log_n elements): stages of half-size 2^lam0 .. 2^(lam0-k+1).
// Each block owns G groups of 2^k elements with stride s = 2^(lam0-k+1) (G <= s), so that
// G consecutive lanes read consecutive addresses.
template <class M, class TW>
FI void ntt_dif_pass_t(Fr* data, const TW& tw, uint32_t log_n,
                       uint32_t lam0, uint32_t k, uint32_t log_g) {
    extern __shared__ Fr sh[];
    const PassTile tile(lam0, k, log_g);
    const uint32_t T = tile.E >> 1;
    tile.load(sh, data, threadIdx.x, T);
    __syncthreads();
    dif_steps_r2<M>(sh, tile, tw, log_n, lam0, k, threadIdx.x);
    tile.store(data, sh, threadIdx.x, T);
}

// The same DIF pass two stages per step (PROOFSCOPE_NTT_RADIX=4): blockDim.x = max(E/4, 1).
template <class M, class TW>
FI void ntt_dif_pass_r4_t(Fr* data, const TW& tw, uint32_t log_n,
                          uint32_t lam0, uint32_t k, uint32_t log_g) {
    extern __shared__ Fr sh[];
    const PassTile tile(lam0, k, log_g);
    const uint32_t T = blockDim.x;
    tile.load(sh, data, threadIdx.x, T);
    __syncthreads();
    dif_steps_r4<M>(sh, tile, tw, log_n, lam0, k, threadIdx.x, T);
    tile.store(data, sh, threadIdx.x, T);
}

// The last k stages (half-size 2^(k-1) .. 1) with the bit reversal and scale of
// ntt_bitrev_scale_t fused into their store (see ChunkTile): in -> out, out of place.
// blockDim.x = E/2 (R4 false) or E/4 (R4 true). The radix-4 entry is launch-bounded to 3 blocks
// of 256 per SM: 80 registers with the even/odd product and no spills (82 unbounded, which
// leaves room for 2 blocks only; the DIF pass needs 78 and gets 3).
template <class M, bool R4>
FI void ntt_dif_last_bitrev_t(const Fr* __restrict__ in, Fr* __restrict__ out, const Fr* __restrict__ tw, uint32_t log_n,
                              uint32_t k, uint32_t log_g, const Fr* __restrict__ hi, const Fr* __restrict__ lo,
                              uint32_t scaled) {
    extern __shared__ Fr sh[];
    const ChunkTile tile(log_n, k, log_g);
    const uint32_t T = blockDim.x;
    tile.load(sh, in, threadIdx.x, T);
    __syncthreads();
    if (R4) {
        dif_steps_r4<M>(sh, tile, TwTable{tw}, log_n, k - 1, k, threadIdx.x, T);
    } else {
        dif_steps_r2<M>(sh, tile, TwTable{tw}, log_n, k - 1, k, threadIdx.x);
    }
    tile.store<M>(out, sh, threadIdx.x, T, hi, lo, scaled);
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

// The bit reversal in place (the lean NTT: no second buffer): the thread of element i swaps it
// with element rev(i) when i < rev(i). Scattered 32-byte accesses, one pass over memory.
FI void ntt_bitrev_inplace_t(Fr* data, uint32_t log_n) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1ull << log_n)) return;
    const uint64_t j = rev_bits(i, log_n);
    if (i < j) {
        const Fr x = data[i];
        data[i] = data[j];
        data[j] = x;
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
        ntt_dif_pass_t<M>(data, TwTable{tw}, log_n, lam0, k, log_g);                                                   \
    }                                                                                                                  \
    extern "C" __global__ void ntt_dif_pass_r4##SUF(Fr* data, const Fr* __restrict__ tw, uint32_t log_n,              \
                                                    uint32_t lam0, uint32_t k, uint32_t log_g) {                      \
        ntt_dif_pass_r4_t<M>(data, TwTable{tw}, log_n, lam0, k, log_g);                                                \
    }                                                                                                                  \
    extern "C" __global__ void ntt_dif_pass_lean##SUF(Fr* data, const Fr* __restrict__ hi, const Fr* __restrict__ lo, \
                                                      uint32_t log_n, uint32_t lam0, uint32_t k, uint32_t log_g) {    \
        ntt_dif_pass_t<M>(data, TwTwoLevel<M>{hi, lo}, log_n, lam0, k, log_g);                                        \
    }                                                                                                                  \
    extern "C" __global__ void ntt_dif_pass_r4_lean##SUF(Fr* data, const Fr* __restrict__ hi,                         \
                                                         const Fr* __restrict__ lo, uint32_t log_n, uint32_t lam0,   \
                                                         uint32_t k, uint32_t log_g) {                                \
        ntt_dif_pass_r4_t<M>(data, TwTwoLevel<M>{hi, lo}, log_n, lam0, k, log_g);                                     \
    }                                                                                                                  \
    extern "C" __global__ void ntt_dif_last_bitrev##SUF(const Fr* __restrict__ in, Fr* __restrict__ out,               \
                                                        const Fr* __restrict__ tw, uint32_t log_n, uint32_t k,       \
                                                        uint32_t log_g, const Fr* __restrict__ hi,                   \
                                                        const Fr* __restrict__ lo, uint32_t scaled) {                \
        ntt_dif_last_bitrev_t<M, false>(in, out, tw, log_n, k, log_g, hi, lo, scaled);                                 \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(256, 3)                                                              \
        ntt_dif_last_bitrev_r4##SUF(const Fr* __restrict__ in, Fr* __restrict__ out,                               \
                                                           const Fr* __restrict__ tw, uint32_t log_n, uint32_t k,    \
                                                           uint32_t log_g, const Fr* __restrict__ hi,                \
                                                           const Fr* __restrict__ lo, uint32_t scaled) {             \
        ntt_dif_last_bitrev_t<M, true>(in, out, tw, log_n, k, log_g, hi, lo, scaled);                                  \
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
extern "C" __global__ void ntt_bitrev_inplace(Fr* data, uint32_t log_n) { ntt_bitrev_inplace_t(data, log_n); }
NTT_ENTRIES(, FrCios)
NTT_ENTRIES(_eo, FrEo)
