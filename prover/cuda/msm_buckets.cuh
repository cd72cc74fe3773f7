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

// acc += the point of entry e (index | sign in bit 31) with a straight-line common path: when
// the accumulator and the point are not the identity and P != 0 (all but a few steps),
// madd_prep, one test and madd_generic run as one basic block; any special case falls back to
// the general formula for that step.
template <class A>
FI void bucket_step(Xyzz<typename A::F>& acc, const Affine<typename A::F>* __restrict__ points, uint32_t e) {
    typedef typename A::F F;
    const Affine<F> p = points[e & 0x7fffffffu];
    const bool neg = (e >> 31) != 0;
    const MaddPR<F> t = madd_prep<A>(acc, p.x, cond_neg(p.y, neg));
    if (!(acc.is_inf() | p.is_inf() | t.P.is_zero())) madd_generic<A>(acc, t);
    else xyzz_add_affine_point<A>(acc, reload_affine(points, e & 0x7fffffffu), neg);
}

// Same sums, each step through bucket_step (straight-line common path).
template <class A>
FI void bucket_acc_1(const Affine<typename A::F>* __restrict__ points, const uint32_t* __restrict__ entries,
                     const uint32_t* __restrict__ offsets, uint32_t nbuckets, Xyzz<typename A::F>* buckets) {
    typedef typename A::F F;
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    Xyzz<F> acc = Xyzz<F>::inf();
    const uint32_t end = offsets[b + 1];
    for (uint32_t k = offsets[b]; k < end; k++) {
        bucket_step<A>(acc, points, entries[k]);
    }
    buckets[b] = acc;
}

// Balanced accumulation: thread t adds the entries [t*chunk, (t+1)*chunk) of the sorted list,
// whatever buckets they belong to, so every thread runs the same number of additions (the
// loops above run one thread per bucket: a warp waits for its longest bucket, and the last
// wave of buckets leaves SMs idle). A bucket that starts inside the thread's range is the
// thread's to write (buckets[b] = its partial sum); the thread's first bucket, when it began
// in an earlier thread's range, goes to carry[t] instead, and bucket_fixup adds those carries.
// Empty buckets are never written: `buckets` must start zeroed (the identity).
template <class A>
FI void bucket_acc_bal(const Affine<typename A::F>* __restrict__ points, const uint32_t* __restrict__ entries,
                       const uint32_t* __restrict__ offsets, uint32_t nbuckets, uint32_t chunk,
                       Xyzz<typename A::F>* buckets, Xyzz<typename A::F>* carry) {
    typedef typename A::F F;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t total = offsets[nbuckets];
    const uint64_t lo64 = (uint64_t)t * chunk;
    if (lo64 >= total) return;
    const uint32_t lo = (uint32_t)lo64;
    const uint32_t hi = (uint32_t)min((uint64_t)total, lo64 + chunk);
    // b = the last bucket with offsets[b] <= lo: it holds entry lo (offsets[b + 1] > lo).
    uint32_t b = 0, z = nbuckets;
    while (z - b > 1) {
        const uint32_t m = (b + z) >> 1;
        if (offsets[m] <= lo) b = m; else z = m;
    }
    uint32_t bend = offsets[b + 1];
    bool owner = offsets[b] == lo;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint32_t k = lo; k < hi; k++) {
        bucket_step<A>(acc, points, entries[k]);
        if (k + 1 == bend || k + 1 == hi) {
            if (owner) buckets[b] = acc; else carry[t] = acc;
            if (k + 1 < hi) {
                do { b++; } while (offsets[b + 1] == k + 1);  // skip empty buckets
                bend = offsets[b + 1];
                owner = true;
                acc = Xyzz<F>::inf();
            }
        }
    }
}

// Adds to bucket b the carries of the threads whose range starts strictly inside it (threads
// lo/chunk + 1 .. (hi-1)/chunk for the bucket's entries [lo, hi)). A bucket of m entries
// takes about m/chunk additions here, in one thread.
template <class A>
FI void bucket_fixup(const uint32_t* __restrict__ offsets, uint32_t nbuckets, uint32_t chunk,
                     Xyzz<typename A::F>* buckets, const Xyzz<typename A::F>* __restrict__ carry) {
    typedef Xyzz<typename A::F> P;
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    const uint32_t lo = offsets[b], hi = offsets[b + 1];
    if (hi == lo) return;
    const uint32_t first = lo / chunk + 1, last = (hi - 1) / chunk;
    if (first > last) return;
    P acc = buckets[b];
    for (uint32_t t = first; t <= last; t++) {
        const P q = carry[t];
        xyzz_add<A>(acc, q);
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
    // Double-and-add from the top set bit of start (no doublings of the identity above it).
    uint32_t start = g * seg;
    P mult = P::inf();
    if (start != 0) {
        for (int bit = 31 - __clz(start); bit >= 0; bit--) {
            xyzz_dbl<A>(mult);
            if ((start >> bit) & 1) xyzz_add<A>(mult, running);
        }
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
