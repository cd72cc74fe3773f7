// G1 multi-scalar multiplication (Pippenger with signed windows) and the batch additions
// of the density split.
//
// Pipeline (one launch each, all on one stream):
//   msm_digits_count   signed digits of every scalar, histogram of (window, bucket)
//   exclusive_scan     bucket offsets (scan_tiles + scan_add_tiles above 4096 buckets)
//   msm_digits_scatter point indices (sign in bit 31) sorted by bucket: a counting sort
//                      (13 of its 16 ms at 2^24 on the H200 are this scatter; two binned
//                      sorts that grouped the writes by key range first were no faster,
//                      reports/gpu/2026-11-30-run26-31.md, and were removed)
//   msm_bucket_acc*    bucket sums (mixed XYZZ additions); four variants, see below
//                      (msm_bucket_fixup after the balanced one)
//   msm_bucket_reduce  per window segment: running sums give sum_b (b+1) * B_b
//   g1_sum_chunks      tree sum of segment partials into one point per window
// The host combines the windows (Horner, width_w doublings per window, about 16 points).
// Over a table of precomputed shifted bases (msm_shift.cuh, built by g1_shift_dbl and
// g1_xyzz_to_affine) the digit kernels get key stride 0 and point stride = the table's
// points per window: one bucket set for all windows, one reduction, no Horner.
// Window layout (c -> nwin windows of nearly equal widths, scalars folded below r/2):
// msm_digits.cuh. The bucket loops, reduction and chunked sums are curve-generic
// (msm_buckets.cuh); this file instantiates them for G1, msm_g2.cu for G2, and the digit
// and sort kernels here serve both.
#include "msm_buckets.cuh"
#include "msm_digits.cuh"
#include "msm_shift.cuh"

// Montgomery scalars -> canonical integers.
extern "C" __global__ void fr_from_mont(const Fr* __restrict__ in, Fr* __restrict__ out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr x = in[i];
    out[i] = Fr::from_mont(x);
}

// Buckets per window for window size c: 2^(widest window - 1) (the host computes the same).
FI uint32_t msm_buckets_per_window(const MsmLayout& l) { return 1u << (l.base + (l.extra ? 1u : 0u) - 1); }

// Keys: window w's digit d goes to key w * key_stride + |d| - 1: key_stride = buckets per
// window for the plain MSM, 0 with precomputed shifted bases (msm_shift.cuh), where all
// windows share one set of buckets and the entry names point w * point_stride + i of the
// table instead (point_stride = the table's points per window; 0 for the plain MSM).
extern "C" __global__ void msm_digits_count(const Fr* __restrict__ scalars, uint32_t n, uint32_t c, uint32_t key_stride, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t s[8];
    Fr x = scalars[i];
    #pragma unroll
    for (int k = 0; k < 8; k++) s[k] = x.v[k];
    (void)msm_fold_scalar(s);
    const MsmLayout l = msm_layout(c);
    uint32_t carry = 0;
    for (uint32_t w = 0; w < l.nwin; w++) {
        int32_t d = msm_window_digit(s, l, w, carry);
        if (d != 0) atomicAdd(&counts[w * key_stride + (uint32_t)(d < 0 ? -d : d) - 1], 1u);
    }
}

// entries get the point index of term i: idx[i] when an index list is given (the tail of a
// density split), else i; bit 31 holds the sign (digit sign xor the scalar's fold).
extern "C" __global__ void msm_digits_scatter(const Fr* __restrict__ scalars, uint32_t n, uint32_t c,
                                              uint32_t key_stride, uint32_t point_stride,
                                              const uint32_t* __restrict__ offsets, uint32_t* cursor,
                                              uint32_t* entries, const uint32_t* __restrict__ idx) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t s[8];
    Fr x = scalars[i];
    #pragma unroll
    for (int k = 0; k < 8; k++) s[k] = x.v[k];
    const bool folded = msm_fold_scalar(s);
    const MsmLayout l = msm_layout(c);
    const uint32_t point = idx ? idx[i] : i;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < l.nwin; w++) {
        int32_t d = msm_window_digit(s, l, w, carry);
        if (d != 0) {
            uint32_t key = w * key_stride + (uint32_t)(d < 0 ? -d : d) - 1;
            uint32_t pos = offsets[key] + atomicAdd(&cursor[key], 1u);
            entries[pos] = (w * point_stride + point) | (((d < 0) != folded) ? 0x80000000u : 0u);
        }
    }
}

// Exclusive prefix sum of `len` counts into offsets[0..len] (offsets[len] = total).
// One block of 1024 threads: each sums a contiguous chunk, the block scans the chunk sums.
extern "C" __global__ void exclusive_scan(const uint32_t* __restrict__ counts, uint32_t* offsets, uint32_t len) {
    __shared__ uint32_t sums[1024];
    const uint32_t t = threadIdx.x;
    const uint32_t chunk = (len + 1023) / 1024;
    const uint32_t lo = min(t * chunk, len), hi = min(lo + chunk, len);
    uint32_t acc = 0;
    for (uint32_t i = lo; i < hi; i++) acc += counts[i];
    sums[t] = acc;
    __syncthreads();
    for (uint32_t d = 1; d < 1024; d <<= 1) {  // Hillis-Steele inclusive scan
        uint32_t v = t >= d ? sums[t - d] : 0;
        __syncthreads();
        sums[t] += v;
        __syncthreads();
    }
    uint32_t run = t == 0 ? 0 : sums[t - 1];
    for (uint32_t i = lo; i < hi; i++) { offsets[i] = run; run += counts[i]; }
    if (t == 1023) offsets[len] = sums[1023];
}

// Multi-block form for long count arrays (large c: 13 * 2^19 counts at c = 20, where the
// single block above walks 6 656 strided counts per thread on one SM): scan_tiles gives each
// count its offset within its tile of 1024 and each tile's total; exclusive_scan (above)
// turns the tile totals into tile offsets; scan_add_tiles adds them and writes offsets[len].
extern "C" __global__ void scan_tiles(const uint32_t* __restrict__ counts, uint32_t* offsets, uint32_t len, uint32_t* tile_sums) {
    __shared__ uint32_t sums[1024];
    const uint32_t t = threadIdx.x, i = blockIdx.x * 1024 + t;
    const uint32_t v = i < len ? counts[i] : 0;
    sums[t] = v;
    __syncthreads();
    for (uint32_t d = 1; d < 1024; d <<= 1) {  // Hillis-Steele inclusive scan
        uint32_t x = t >= d ? sums[t - d] : 0;
        __syncthreads();
        sums[t] += x;
        __syncthreads();
    }
    if (i < len) offsets[i] = sums[t] - v;
    if (t == 1023) tile_sums[blockIdx.x] = sums[1023];
}

extern "C" __global__ void scan_add_tiles(uint32_t* offsets, uint32_t len, const uint32_t* __restrict__ tile_offsets, uint32_t ntiles) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) offsets[i] += tile_offsets[i / 1024];
    else if (i == len) offsets[len] = tile_offsets[ntiles];
}

// Variants (the host picks one by name, see prover/src/gpu/msm.rs; `gpu bench` times them):
// blocks of 128 threads, at least N blocks per SM (N = 4: 128 registers, 3: 168).
// ptxas -v (nvcc 13.0): b4 no spills, eo 16 bytes. H200, 2^24 points (run 2026-11-30):
// b4 235 ms, eo 142 ms, f1eo3 140.6 ms; b5/b6 (fewer registers), f1/f1eo (straight-line,
// 128 registers) and i2/i2eo (two accumulators per thread) were slower and were removed.
//   b4      the original loop, CIOS product                         (N = 4, the baseline)
//   eo      the original loop, even/odd product (field.cuh mul_eo)  (N = 4)
//   f1eo3   one accumulator, straight-line common path, even/odd    (N = 3)
//   bal     the f1eo3 step over a fixed chunk of entries per thread (N = 3, see below)
#define ACC_ARGS const G1Affine* __restrict__ points, const uint32_t* __restrict__ entries, \
    const uint32_t* __restrict__ offsets, uint32_t nbuckets, G1Xyzz* buckets
#define ACC_PASS points, entries, offsets, nbuckets, buckets
extern "C" __global__ void __launch_bounds__(128, 4) msm_bucket_acc(ACC_ARGS) { bucket_acc<FpStd>(ACC_PASS); }
extern "C" __global__ void __launch_bounds__(128, 4) msm_bucket_acc_eo(ACC_ARGS) { bucket_acc<FpEo>(ACC_PASS); }
extern "C" __global__ void __launch_bounds__(128, 3) msm_bucket_acc_f1eo3(ACC_ARGS) { bucket_acc_1<FpEo>(ACC_PASS); }
// bal: the f1eo3 step, balanced over threads (a fixed chunk of entries each, see
// bucket_acc_bal), then msm_bucket_fixup for the buckets split between threads.
extern "C" __global__ void __launch_bounds__(128, 3) msm_bucket_acc_bal(ACC_ARGS, uint32_t chunk, G1Xyzz* carry) {
    bucket_acc_bal<FpEo>(points, entries, offsets, nbuckets, chunk, buckets, carry);
}
extern "C" __global__ void msm_bucket_fixup(const uint32_t* __restrict__ offsets, uint32_t nbuckets, uint32_t chunk,
                                            G1Xyzz* buckets, const G1Xyzz* __restrict__ carry) {
    bucket_fixup<FpEo>(offsets, nbuckets, chunk, buckets, carry);
}


// The reduction of G1 (even/odd product: 3.2 vs 6.8 ms with CIOS at 2^24 on the H200).
extern "C" __global__ void msm_bucket_reduce(const G1Xyzz* __restrict__ buckets, uint32_t nwin, uint32_t nb, uint32_t seg, G1Xyzz* partials) {
    bucket_reduce<FpEo>(buckets, nwin, nb, seg, partials);
}
// out[k] = sum of in[k*chunk .. min((k+1)*chunk, count)) (even/odd product since run 44).
extern "C" __global__ void g1_sum_chunks(const G1Xyzz* __restrict__ in, uint32_t count, uint32_t chunk, G1Xyzz* out) {
    sum_chunks<FpEo>(in, count, chunk, out);
}
// Batch addition of the density split (scalars equal to one): out[k] = sum of the affine
// points idx[k*chunk ..) (or points[k*chunk ..) when idx is null).
extern "C" __global__ void g1_sum_affine_chunks(const G1Affine* __restrict__ points, const uint32_t* __restrict__ idx,
                                                uint32_t count, uint32_t chunk, G1Xyzz* out) {
    sum_affine_chunks<FpStd>(points, idx, count, chunk, out);
}
// The same with the even/odd product (the bucket sums' product).
extern "C" __global__ void g1_sum_affine_chunks_eo(const G1Affine* __restrict__ points, const uint32_t* __restrict__ idx,
                                                   uint32_t count, uint32_t chunk, G1Xyzz* out) {
    sum_affine_chunks<FpEo>(points, idx, count, chunk, out);
}

// The table of precomputed shifted bases (msm_shift.cuh), one window at a time:
// tmp = 2^width * in (XYZZ), then out = affine(tmp) with one inversion per `chunk` points.
extern "C" __global__ void g1_shift_dbl(const G1Affine* __restrict__ in, uint32_t n, uint32_t width, G1Xyzz* tmp) {
    shift_dbl<FpEo>(in, n, width, tmp);
}
extern "C" __global__ void g1_xyzz_to_affine(const G1Xyzz* __restrict__ in, uint32_t n, uint32_t chunk, G1Affine* out) {
    xyzz_to_affine_chunk<FpEo>(in, n, chunk, out);
}
