// G2 multi-scalar multiplication: the B query's MSM in G2 (the proof's B), the last MSM of a
// partition that the CPU would otherwise do (blst, ~0.5 s per 2^20 partition beside the
// syntheses on the H200 host: it bound every engine run, see reports/gpu).
//
// Same pipeline as G1 (msm.cu): the digit, scan and scatter kernels there sort the scalars
// into buckets (they do not depend on the curve), then the kernels below, instantiated from
// msm_buckets.cuh over Fp2, accumulate, reduce and sum. A G2 point is 48 words (affine) or
// 96 (XYZZ), so the accumulators do not fit 168 registers: blocks of 128 threads, 2 per SM
// (255 registers), some spilling either way.
//   g2eo     the original loop, even/odd Fp product inside Fp2
//   g2f1eo   straight-line common path (madd_prep/madd_generic), even/odd
//   g2       the original loop, CIOS product (the baseline)
//   g2bal    g2f1eo's step balanced over threads (bucket_acc_bal + g2_bucket_fixup)
#include "msm_buckets.cuh"

#define G2_ACC_ARGS const G2Affine* __restrict__ points, const uint32_t* __restrict__ entries, \
    const uint32_t* __restrict__ offsets, uint32_t nbuckets, G2Xyzz* buckets
#define G2_ACC_PASS points, entries, offsets, nbuckets, buckets
extern "C" __global__ void __launch_bounds__(128, 2) g2_bucket_acc(G2_ACC_ARGS) { bucket_acc<Fp2Std>(G2_ACC_PASS); }
extern "C" __global__ void __launch_bounds__(128, 2) g2_bucket_acc_eo(G2_ACC_ARGS) { bucket_acc<Fp2Eo>(G2_ACC_PASS); }
extern "C" __global__ void __launch_bounds__(128, 2) g2_bucket_acc_f1eo(G2_ACC_ARGS) { bucket_acc_1<Fp2Eo>(G2_ACC_PASS); }
extern "C" __global__ void __launch_bounds__(128, 2) g2_bucket_acc_bal(G2_ACC_ARGS, uint32_t chunk, G2Xyzz* carry) {
    bucket_acc_bal<Fp2Eo>(points, entries, offsets, nbuckets, chunk, buckets, carry);
}
extern "C" __global__ void g2_bucket_fixup(const uint32_t* __restrict__ offsets, uint32_t nbuckets, uint32_t chunk,
                                           G2Xyzz* buckets, const G2Xyzz* __restrict__ carry) {
    bucket_fixup<Fp2Eo>(offsets, nbuckets, chunk, buckets, carry);
}

extern "C" __global__ void __launch_bounds__(128, 2) g2_bucket_reduce(const G2Xyzz* __restrict__ buckets, uint32_t nwin, uint32_t nb,
                                                                     uint32_t seg, G2Xyzz* partials) {
    bucket_reduce<Fp2Eo>(buckets, nwin, nb, seg, partials);
}
extern "C" __global__ void g2_sum_chunks(const G2Xyzz* __restrict__ in, uint32_t count, uint32_t chunk, G2Xyzz* out) {
    sum_chunks<Fp2Eo>(in, count, chunk, out);
}
extern "C" __global__ void g2_sum_affine_chunks(const G2Affine* __restrict__ points, const uint32_t* __restrict__ idx,
                                                uint32_t count, uint32_t chunk, G2Xyzz* out) {
    sum_affine_chunks<Fp2Eo>(points, idx, count, chunk, out);
}
