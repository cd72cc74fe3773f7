// The curve-generic half of the MSM: bucket accumulation, bucket reduction and the chunked
// sums, written once over a field policy A (curve.cuh: FpEo for G1, Fp2Eo for G2) and
// instantiated as kernels by msm.cu (G1) and msm_g2.cu (G2). The digit and sort kernels
// (msm.cu) do not depend on the curve: both MSMs share them.
#pragma once
#include "curve.cuh"

// Bucket b (over all windows) = sum of the points listed in entries[offsets[b]..offsets[b+1]).
template <class A>
FI void bucket_acc(const Affine<typename A::F>* __restrict__ points, const uint32_t* __restrict__ entries,
                   const uint32_t* __restrict__ offsets, uint32_t nbuckets, Xyzz<typename A::F>* buckets) {
    typedef typename A::F F;
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    Xyzz<F> acc = Xyzz<F>::inf();
    const uint32_t end = offsets[b + 1];
    for (uint32_t k = offsets[b]; k < end; k++) {
        const uint32_t e = entries[k];
        const Affine<F> p = points[e & 0x7fffffffu];
        xyzz_add_affine_point<A>(acc, p, (e >> 31) != 0);
    }
    buckets[b] = acc;
}

// An affine point read again in a slow path: through ld.global.cg (an asm load the compiler
// does not merge with the first read), so the first read's registers (24 words for G1, 48 for
// G2) need not stay live
// across the common path only to serve the rare special case.
template <class F>
FI Affine<F> reload_affine(const Affine<F>* __restrict__ points, uint32_t i) {
    static_assert(sizeof(Affine<F>) % 16 == 0, "affine points are whole 16-byte vectors");
    const uint4* src = reinterpret_cast<const uint4*>(points + i);
    Affine<F> p;
    uint4* dst = reinterpret_cast<uint4*>(&p);
    #pragma unroll
    for (int k = 0; k < (int)(sizeof(Affine<F>) / 16); k++) dst[k] = __ldcg(src + k);
    return p;
}

// Same sums with a straight-line common path: when the accumulator and the point are not
// the identity and P != 0 (all but a few steps), madd_prep, one test and madd_generic run
// as one basic block; any special case falls back to the general formula for that step.
template <class A>
FI void bucket_acc_1(const Affine<typename A::F>* __restrict__ points, const uint32_t* __restrict__ entries,
                     const uint32_t* __restrict__ offsets, uint32_t nbuckets, Xyzz<typename A::F>* buckets) {
    typedef typename A::F F;
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    Xyzz<F> acc = Xyzz<F>::inf();
    const uint32_t end = offsets[b + 1];
    for (uint32_t k = offsets[b]; k < end; k++) {
        const uint32_t e = entries[k];
        const Affine<F> p = points[e & 0x7fffffffu];
        const bool neg = (e >> 31) != 0;
        const MaddPR<F> t = madd_prep<A>(acc, p.x, cond_neg(p.y, neg));
        if (!(acc.is_inf() | p.is_inf() | t.P.is_zero())) madd_generic<A>(acc, t);
        else xyzz_add_affine_point<A>(acc, reload_affine(points, e & 0x7fffffffu), neg);
    }
    buckets[b] = acc;
}

// For window w and segment g of `seg` buckets (bucket index i stands for digit i+1):
// partial = sum_{i in segment} (i+1) * B_i, from a running sum plus start * (sum of B_i).
template <class A>
FI void bucket_reduce(const Xyzz<typename A::F>* __restrict__ buckets, uint32_t nwin, uint32_t nb, uint32_t seg,
                      Xyzz<typename A::F>* partials) {
    typedef Xyzz<typename A::F> P;
    uint32_t nseg = nb / seg;
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= nwin * nseg) return;
    uint32_t w = id / nseg, g = id % nseg;
    const P* B = buckets + (uint64_t)w * nb + (uint64_t)g * seg;
    P running = P::inf(), total = P::inf();
    for (int i = (int)seg - 1; i >= 0; i--) {
        const P q = B[i];
        xyzz_add<A>(running, q);
        xyzz_add<A>(total, running);
    }
    // total = sum (i - start + 1) B_i; add start * running (running = sum of B_i).
    uint32_t start = g * seg;
    P mult = P::inf();
    for (int bit = 31; bit >= 0; bit--) {
        xyzz_dbl<A>(mult);
        if ((start >> bit) & 1) xyzz_add<A>(mult, running);
    }
    xyzz_add<A>(total, mult);
    partials[id] = total;
}

// out[k] = sum of in[k*chunk .. min((k+1)*chunk, count)).
template <class A>
FI void sum_chunks(const Xyzz<typename A::F>* __restrict__ in, uint32_t count, uint32_t chunk, Xyzz<typename A::F>* out) {
    typedef Xyzz<typename A::F> P;
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t lo = k * chunk;
    if (lo >= count) return;
    uint32_t hi = min(lo + chunk, count);
    P acc = P::inf();
    for (uint32_t i = lo; i < hi; i++) {
        const P q = in[i];
        xyzz_add<A>(acc, q);
    }
    out[k] = acc;
}

// Batch addition of the density split (scalars equal to one): out[k] = sum of the affine
// points idx[k*chunk ..) (or points[k*chunk ..) when idx is null).
template <class A>
FI void sum_affine_chunks(const Affine<typename A::F>* __restrict__ points, const uint32_t* __restrict__ idx,
                          uint32_t count, uint32_t chunk, Xyzz<typename A::F>* out) {
    typedef typename A::F F;
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t lo = k * chunk;
    if (lo >= count) return;
    uint32_t hi = min(lo + chunk, count);
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint32_t i = lo; i < hi; i++) {
        const Affine<F> p = points[idx ? idx[i] : i];
        xyzz_add_affine_point<A>(acc, p, false);
    }
    out[k] = acc;
}
