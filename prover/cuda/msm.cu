// G1 multi-scalar multiplication (Pippenger with signed c-bit windows) and the batch
// additions of the density split.
//
// Pipeline (one launch each, all on one stream):
//   msm_digits_count   signed digits of every scalar, histogram of (window, bucket)
//   exclusive_scan     bucket offsets (single block)
//   msm_digits_scatter point indices (sign in bit 31) sorted by bucket: a counting sort
//   msm_bucket_acc     one thread per bucket sums its points (mixed XYZZ additions)
//   msm_bucket_reduce  per window segment: running sums give sum_b (b+1) * B_b
//   g1_sum_chunks      tree sum of segment partials into one point per window
// The host combines the windows (Horner with c doublings per window, about 16 points).
#include "g1.cuh"

// Signed digit of window w (c bits) of a canonical scalar, with the carry of the windows
// below it; returns the digit in [-2^(c-1), 2^(c-1)] and updates the carry.
FI int32_t window_digit(const uint32_t s[8], uint32_t w, uint32_t c, uint32_t& carry) {
    uint32_t bit = w * c;
    uint32_t word = bit >> 5, off = bit & 31;
    uint32_t v = 0;
    if (word < 8) {
        v = s[word] >> off;
        if (off + c > 32 && word + 1 < 8) v |= s[word + 1] << (32 - off);
    }
    v = (v & ((1u << c) - 1)) + carry;
    if (v > (1u << (c - 1))) { carry = 1; return (int32_t)v - (int32_t)(1u << c); }
    carry = 0;
    return (int32_t)v;
}

// Montgomery scalars -> canonical integers.
extern "C" __global__ void fr_from_mont(const Fr* __restrict__ in, Fr* __restrict__ out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr x = in[i];
    out[i] = Fr::from_mont(x);
}

extern "C" __global__ void msm_digits_count(const Fr* __restrict__ scalars, uint32_t n, uint32_t c,
                                            uint32_t nwin, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t s[8];
    Fr x = scalars[i];
    #pragma unroll
    for (int k = 0; k < 8; k++) s[k] = x.v[k];
    const uint32_t nb = 1u << (c - 1);
    uint32_t carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        int32_t d = window_digit(s, w, c, carry);
        if (d != 0) atomicAdd(&counts[w * nb + (uint32_t)(d < 0 ? -d : d) - 1], 1u);
    }
}

// entries get the point index of term i: idx[i] when an index list is given (the tail of a
// density split), else i; bit 31 holds the digit's sign.
extern "C" __global__ void msm_digits_scatter(const Fr* __restrict__ scalars, uint32_t n, uint32_t c,
                                              uint32_t nwin, const uint32_t* __restrict__ offsets,
                                              uint32_t* cursor, uint32_t* entries, const uint32_t* __restrict__ idx) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t s[8];
    Fr x = scalars[i];
    #pragma unroll
    for (int k = 0; k < 8; k++) s[k] = x.v[k];
    const uint32_t nb = 1u << (c - 1);
    const uint32_t point = idx ? idx[i] : i;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        int32_t d = window_digit(s, w, c, carry);
        if (d != 0) {
            uint32_t key = w * nb + (uint32_t)(d < 0 ? -d : d) - 1;
            uint32_t pos = offsets[key] + atomicAdd(&cursor[key], 1u);
            entries[pos] = point | (d < 0 ? 0x80000000u : 0u);
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

// Bucket b (over all windows) = sum of the points listed in entries[offsets[b]..offsets[b+1]).
FI void bucket_acc(const G1Affine* __restrict__ points, const uint32_t* __restrict__ entries,
                   const uint32_t* __restrict__ offsets, uint32_t nbuckets, G1Xyzz* buckets) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    G1Xyzz acc = G1Xyzz::inf();
    const uint32_t end = offsets[b + 1];
    for (uint32_t k = offsets[b]; k < end; k++) {
        const uint32_t e = entries[k];
        const G1Affine p = points[e & 0x7fffffffu];
        g1_add_affine_point(acc, p, (e >> 31) != 0);
    }
    buckets[b] = acc;
}

// Variants by register budget (blocks of 128 threads, at least N blocks per SM): more
// resident warps hide the serial carry chains better, fewer registers may spill. The
// host picks one (PROOFSCOPE_MSM_ACC=b4|b5|b6, default b4); `gpu bench` times them all.
extern "C" __global__ void __launch_bounds__(128, 4) msm_bucket_acc(const G1Affine* __restrict__ points, const uint32_t* __restrict__ entries,
    const uint32_t* __restrict__ offsets, uint32_t nbuckets, G1Xyzz* buckets) { bucket_acc(points, entries, offsets, nbuckets, buckets); }
extern "C" __global__ void __launch_bounds__(128, 5) msm_bucket_acc_b5(const G1Affine* __restrict__ points, const uint32_t* __restrict__ entries,
    const uint32_t* __restrict__ offsets, uint32_t nbuckets, G1Xyzz* buckets) { bucket_acc(points, entries, offsets, nbuckets, buckets); }
extern "C" __global__ void __launch_bounds__(128, 6) msm_bucket_acc_b6(const G1Affine* __restrict__ points, const uint32_t* __restrict__ entries,
    const uint32_t* __restrict__ offsets, uint32_t nbuckets, G1Xyzz* buckets) { bucket_acc(points, entries, offsets, nbuckets, buckets); }

// For window w and segment g of `seg` buckets (bucket index i stands for digit i+1):
// partial = sum_{i in segment} (i+1) * B_i, from a running sum plus start * (sum of B_i).
extern "C" __global__ void msm_bucket_reduce(const G1Xyzz* __restrict__ buckets, uint32_t nwin, uint32_t nb,
                                             uint32_t seg, G1Xyzz* partials) {
    uint32_t nseg = nb / seg;
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= nwin * nseg) return;
    uint32_t w = id / nseg, g = id % nseg;
    const G1Xyzz* B = buckets + (uint64_t)w * nb + (uint64_t)g * seg;
    G1Xyzz running = G1Xyzz::inf(), total = G1Xyzz::inf();
    for (int i = (int)seg - 1; i >= 0; i--) {
        const G1Xyzz q = B[i];
        g1_add(running, q);
        g1_add(total, running);
    }
    // total = sum (i - start + 1) B_i; add start * running (running = sum of B_i).
    uint32_t start = g * seg;
    G1Xyzz mult = G1Xyzz::inf();
    for (int bit = 31; bit >= 0; bit--) {
        g1_dbl(mult);
        if ((start >> bit) & 1) g1_add(mult, running);
    }
    g1_add(total, mult);
    partials[id] = total;
}

// out[k] = sum of in[k*chunk .. min((k+1)*chunk, count)).
extern "C" __global__ void g1_sum_chunks(const G1Xyzz* __restrict__ in, uint32_t count, uint32_t chunk, G1Xyzz* out) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t lo = k * chunk;
    if (lo >= count) return;
    uint32_t hi = min(lo + chunk, count);
    G1Xyzz acc = G1Xyzz::inf();
    for (uint32_t i = lo; i < hi; i++) {
        const G1Xyzz q = in[i];
        g1_add(acc, q);
    }
    out[k] = acc;
}

// Batch addition of the density split (scalars equal to one): out[k] = sum of the affine
// points idx[k*chunk ..) (or points[k*chunk ..) when idx is null).
extern "C" __global__ void g1_sum_affine_chunks(const G1Affine* __restrict__ points, const uint32_t* __restrict__ idx,
                                                uint32_t count, uint32_t chunk, G1Xyzz* out) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t lo = k * chunk;
    if (lo >= count) return;
    uint32_t hi = min(lo + chunk, count);
    G1Xyzz acc = G1Xyzz::inf();
    for (uint32_t i = lo; i < hi; i++) {
        const G1Affine p = points[idx ? idx[i] : i];
        g1_add_affine_point(acc, p, false);
    }
    out[k] = acc;
}
