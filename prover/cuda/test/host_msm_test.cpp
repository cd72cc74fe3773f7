// Host run of the MSM kernels of msm.cu (each thread of each launch called in a loop, the
// CUDA built-ins shimmed), through the pipeline of prover/src/gpu/msm.rs: digits, counting
// sort, every bucket-accumulation variant, segmented reduction, per-window sums and the
// Horner combination over the window widths. The result must equal (sum s_i k_i) * G for
// points k_i * G, with random and special scalars and identity points, for several window
// sizes and segment lengths; and the bucket-offset scans (threads of a block as OS threads
// at a barrier). Catches indexing, layout and sign mistakes without a GPU.
// Build and run: scripts/host-field-test.sh
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include <barrier>
#include <thread>

#define __global__
#define __launch_bounds__(a, b)
#define __shared__ static
struct Dim3 { uint32_t x = 0, y = 1, z = 1; };
static Dim3 blockIdx, blockDim;
static thread_local Dim3 threadIdx;
// __syncthreads for launch_sync (one OS thread per CUDA thread of a block); a no-op otherwise.
static std::barrier<>* block_barrier = nullptr;
static inline void __syncthreads() { if (block_barrier) block_barrier->arrive_and_wait(); }
static inline uint32_t atomicAdd(uint32_t* p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
struct uint4 { uint32_t x, y, z, w; };
static inline uint4 __ldcg(const uint4* p) { return *p; }
static inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint64_t min(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline int __clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
#include "../msm.cu"
#include "host_common.h"

// One launch: every (block, thread) in order (no kernel used here synchronizes threads).
static void launch(uint64_t threads, uint32_t block, const std::function<void()>& body) {
    blockDim.x = block;
    uint32_t grid = (uint32_t)((threads + block - 1) / block);
    for (uint32_t b = 0; b < grid; b++)
        for (uint32_t t = 0; t < block; t++) { blockIdx.x = b; threadIdx.x = t; body(); }
}

// A launch of a kernel that synchronizes its threads: each block runs as `block` OS threads
// meeting at a barrier (the shared arrays are statics: one block at a time).
static void launch_sync(uint32_t grid, uint32_t block, const std::function<void()>& body) {
    blockDim.x = block;
    for (uint32_t b = 0; b < grid; b++) {
        blockIdx.x = b;
        std::barrier<> bar((std::ptrdiff_t)block);
        block_barrier = &bar;
        std::vector<std::thread> ts;
        for (uint32_t t = 0; t < block; t++) ts.emplace_back([&, t] { threadIdx.x = t; body(); });
        for (auto& th : ts) th.join();
        block_barrier = nullptr;
    }
}

// The bucket-offset scans of msm.rs: single block (exclusive_scan) and tiled (scan_tiles,
// exclusive_scan of the tile totals, scan_add_tiles), against a host prefix sum.
static int check_scans(std::mt19937_64& g) {
    int bad = 0;
    for (uint32_t len : {1u, 5u, 1023u, 1024u, 1025u, 3072u, 5000u}) {
        std::vector<uint32_t> counts(len), want(len + 1, 0);
        for (uint32_t i = 0; i < len; i++) counts[i] = (uint32_t)(g() % 700);
        for (uint32_t i = 0; i < len; i++) want[i + 1] = want[i] + counts[i];
        std::vector<uint32_t> single(len + 1, 0);
        launch_sync(1, 1024, [&] { exclusive_scan(counts.data(), single.data(), len); });
        if (single != want) { printf("host msm: exclusive_scan wrong for %u counts\n", len); bad++; }
        const uint32_t ntiles = (len + 1023) / 1024;
        std::vector<uint32_t> offsets(len + 1, 0), tile_sums(ntiles, 0), tile_offsets(ntiles + 1, 0);
        launch_sync(ntiles, 1024, [&] { scan_tiles(counts.data(), offsets.data(), len, tile_sums.data()); });
        launch_sync(1, 1024, [&] { exclusive_scan(tile_sums.data(), tile_offsets.data(), ntiles); });
        launch(len + 1, 1024, [&] { scan_add_tiles(offsets.data(), len, tile_offsets.data(), ntiles); });
        if (offsets != want) { printf("host msm: tiled scan wrong for %u counts\n", len); bad++; }
    }
    return bad;
}

static bool same(const G1Xyzz& a, const G1Xyzz& b) {
    if (a.is_inf() || b.is_inf()) return a.is_inf() && b.is_inf();
    return Fp::mul(a.X, b.ZZ) == Fp::mul(b.X, a.ZZ) && Fp::mul(a.Y, b.ZZZ) == Fp::mul(b.Y, a.ZZZ);
}

typedef void (*AccKernel)(const G1Affine*, const uint32_t*, const uint32_t*, uint32_t, G1Xyzz*);

// The pipeline of Gpu::msm_device_cfg for canonical scalars; chunk > 0 runs the balanced
// kernel (msm_bucket_acc_bal, `chunk` entries per thread, then msm_bucket_fixup) instead of
// `acc`, over carries poisoned with garbage so that a carry read before being written shows.
static G1Xyzz msm(const std::vector<G1Affine>& pts, const std::vector<Fr>& sc, uint32_t c, uint32_t seg, AccKernel acc,
                  uint32_t chunk = 0) {
    const uint32_t n = (uint32_t)pts.size();
    const MsmLayout l = msm_layout(c);
    const uint32_t nb = msm_buckets_per_window(l), nbk = l.nwin * nb;
    std::vector<uint32_t> counts(nbk, 0), offsets(nbk + 1, 0), entries((size_t)n * l.nwin, 0);
    launch(n, 256, [&] { msm_digits_count(sc.data(), n, c, nb, counts.data()); });
    for (uint32_t i = 0; i < nbk; i++) offsets[i + 1] = offsets[i] + counts[i];  // exclusive_scan
    std::fill(counts.begin(), counts.end(), 0);
    launch(n, 256, [&] { msm_digits_scatter(sc.data(), n, c, nb, 0, offsets.data(), counts.data(), entries.data(), nullptr); });
    std::vector<G1Xyzz> buckets(nbk, G1Xyzz::inf());
    if (chunk) {
        const uint64_t threads = ((uint64_t)n * l.nwin + chunk - 1) / chunk;
        std::vector<G1Xyzz> carry(threads);
        memset(carry.data(), 0x5a, carry.size() * sizeof(G1Xyzz));
        launch(threads, 128, [&] { msm_bucket_acc_bal(pts.data(), entries.data(), offsets.data(), nbk, buckets.data(), chunk, carry.data()); });
        launch(nbk, 128, [&] { msm_bucket_fixup(offsets.data(), nbk, chunk, buckets.data(), carry.data()); });
    } else {
        launch(nbk, 128, [&] { acc(pts.data(), entries.data(), offsets.data(), nbk, buckets.data()); });
    }
    seg = seg < nb ? seg : nb;
    const uint32_t nseg = nb / seg;
    std::vector<G1Xyzz> partials((size_t)l.nwin * nseg);
    launch((uint64_t)l.nwin * nseg, 128, [&] { msm_bucket_reduce(buckets.data(), l.nwin, nb, seg, partials.data()); });
    std::vector<G1Xyzz> wins(l.nwin, G1Xyzz::inf());
    for (uint32_t w = 0; w < l.nwin; w++)
        for (uint32_t g = 0; g < nseg; g++) xyzz_add(wins[w], partials[(size_t)w * nseg + g]);
    G1Xyzz total = G1Xyzz::inf();
    for (int w = (int)l.nwin - 1; w >= 0; w--) {
        for (uint32_t k = 0; k < msm_win_width(l, (uint32_t)w); k++) xyzz_dbl(total);
        xyzz_add(total, wins[w]);
    }
    return total;
}

// The table of precomputed shifted bases as msm.rs builds it: window 0 the points, window w
// = 2^(width of w-1) * window w-1 (g1_shift_dbl, then g1_xyzz_to_affine in chunks).
static std::vector<G1Affine> shift_table(const std::vector<G1Affine>& pts, uint32_t c, uint32_t chunk) {
    const uint32_t n = (uint32_t)pts.size();
    const MsmLayout l = msm_layout(c);
    std::vector<G1Affine> t((size_t)n * l.nwin);
    std::copy(pts.begin(), pts.end(), t.begin());
    std::vector<G1Xyzz> tmp(n);
    for (uint32_t w = 1; w < l.nwin; w++) {
        const uint32_t width = msm_win_width(l, w - 1);
        launch(n, 128, [&] { g1_shift_dbl(&t[(size_t)(w - 1) * n], n, width, tmp.data()); });
        launch((n + chunk - 1) / chunk, 128, [&] { g1_xyzz_to_affine(tmp.data(), n, chunk, &t[(size_t)w * n]); });
    }
    return t;
}

// The MSM over a shifted table (the "pre" configs): one set of buckets for all windows,
// entries naming point w * n + i, one reduction, no Horner. `idx` (may be empty) maps term i
// to point idx[i] of the table's n points, as the tail MSM of a density split does.
static G1Xyzz msm_pre(const std::vector<G1Affine>& table, uint32_t npts, const std::vector<Fr>& sc, uint32_t c,
                      uint32_t chunk, const std::vector<uint32_t>& idx) {
    const uint32_t n = (uint32_t)sc.size();
    const MsmLayout l = msm_layout(c);
    const uint32_t nb = msm_buckets_per_window(l);
    std::vector<uint32_t> counts(nb, 0), offsets(nb + 1, 0), entries((size_t)n * l.nwin, 0);
    launch(n, 256, [&] { msm_digits_count(sc.data(), n, c, 0, counts.data()); });
    for (uint32_t i = 0; i < nb; i++) offsets[i + 1] = offsets[i] + counts[i];
    std::fill(counts.begin(), counts.end(), 0);
    const uint32_t* ix = idx.empty() ? nullptr : idx.data();
    launch(n, 256, [&] { msm_digits_scatter(sc.data(), n, c, 0, npts, offsets.data(), counts.data(), entries.data(), ix); });
    std::vector<G1Xyzz> buckets(nb, G1Xyzz::inf());
    const uint64_t threads = ((uint64_t)n * l.nwin + chunk - 1) / chunk;
    std::vector<G1Xyzz> carry(threads);
    memset(carry.data(), 0x5a, carry.size() * sizeof(G1Xyzz));
    launch(threads, 128, [&] { msm_bucket_acc_bal(table.data(), entries.data(), offsets.data(), nb, buckets.data(), chunk, carry.data()); });
    launch(nb, 128, [&] { msm_bucket_fixup(offsets.data(), nb, chunk, buckets.data(), carry.data()); });
    const uint32_t seg = nb < 16 ? nb : 16, nseg = nb / seg;
    std::vector<G1Xyzz> partials(nseg);
    launch(nseg, 128, [&] { msm_bucket_reduce(buckets.data(), 1, nb, seg, partials.data()); });
    G1Xyzz total = G1Xyzz::inf();
    for (auto& p : partials) xyzz_add(total, p);
    return total;
}

int main() {
    int bad = 0;
    const G1Affine G = g1_generator();
    // Affine k*G for k = 1..12.
    std::vector<G1Affine> mult;
    G1Xyzz q = G1Xyzz::from_affine(G);
    for (int k = 1; k <= 12; k++) {
        if (k > 1) xyzz_add_affine_point(q, G, false);
        G1Affine a; a.x = Fp::mul(q.X, inv(q.ZZ)); a.y = Fp::mul(q.Y, inv(q.ZZZ));
        mult.push_back(a);
    }
    std::mt19937_64 g(7);
    bad += check_scans(g);
    const uint32_t n = 600;
    std::vector<G1Affine> pts(n);
    std::vector<Fr> sc(n);
    std::vector<int> ks(n);  // point i = ks[i] * G (0: the identity)
    Fr one_int = Fr::zero(); one_int.v[0] = 1;
    for (uint32_t i = 0; i < n; i++) {
        int k = (int)(g() % 13);
        Fr s;
        for (int j = 0; j < 8; j++) s.v[j] = (uint32_t)g();
        s.v[7] %= FrParams::p(7);
        if (i % 50 == 1) s = Fr::zero();
        if (i % 50 == 2) s = one_int;
        if (i % 50 == 3) s = Fr::sub(Fr::zero(), one_int);  // r - 1
        if (i % 50 == 4) { s = Fr::zero(); s.v[0] = 0x80000000u; s.v[1] = 0x7fffffffu; }  // low bits only
        sc[i] = s;
        ks[i] = k;
    }
    // Duplicate and opposite points with equal scalars (doubling / cancellation in buckets).
    ks[10] = ks[11] = 5; sc[11] = sc[10];
    ks[12] = -5; sc[12] = sc[10];
    Fr want_s = Fr::zero();  // sum s_i k_i mod r (canonical integers; add/sub are representation-free)
    for (uint32_t i = 0; i < n; i++) {
        if (ks[i] == 0) { memset(&pts[i], 0, sizeof(G1Affine)); continue; }
        pts[i] = mult[(ks[i] < 0 ? -ks[i] : ks[i]) - 1];
        if (ks[i] < 0) pts[i].y = Fp::neg(pts[i].y);
        for (int m = 0; m < (ks[i] < 0 ? -ks[i] : ks[i]); m++) want_s = ks[i] < 0 ? Fr::sub(want_s, sc[i]) : Fr::add(want_s, sc[i]);
    }
    G1Xyzz want = G1Xyzz::inf();  // want_s * G, double-and-add
    for (int i = 7; i >= 0; i--)
        for (int b = 31; b >= 0; b--) {
            xyzz_dbl(want);
            if ((want_s.v[i] >> b) & 1) xyzz_add_affine_point(want, G, false);
        }
    struct { const char* name; AccKernel k; } kernels[] = {
        {"b4", msm_bucket_acc}, {"eo", msm_bucket_acc_eo}, {"f1eo3", msm_bucket_acc_f1eo3},
    };
    struct { uint32_t c, seg; } configs[] = {{5, 16}, {9, 16}, {13, 4}, {16, 16}, {16, 1}};
    for (auto& cf : configs)
        for (auto& k : kernels) {
            G1Xyzz got = msm(pts, sc, cf.c, cf.seg, k.k);
            if (!same(got, want)) { printf("host msm: %s c=%u seg=%u differs from the expected sum\n", k.name, cf.c, cf.seg); bad++; }
        }
    // Balanced accumulation: chunks of 1 (every entry its own thread), odd sizes that split
    // buckets between threads (carries, several per bucket at c = 5: ~37 entries a bucket),
    // and a chunk longer than the whole list; with the even/odd reduction as well.
    for (uint32_t c : {5u, 9u, 13u})
        for (uint32_t chunk : {1u, 3u, 7u, 64u, 5000u}) {
            G1Xyzz got = msm(pts, sc, c, 4, nullptr, chunk);
            if (!same(got, want)) { printf("host msm: bal c=%u chunk=%u differs from the expected sum\n", c, chunk); bad++; }
        }
    {
        // One bucket holding every entry (all scalars one): its sum is split over many
        // threads and the fixup adds them all.
        std::vector<Fr> ones(n, one_int);
        G1Xyzz want1 = G1Xyzz::inf();
        for (uint32_t i = 0; i < n; i++) xyzz_add_affine_point(want1, pts[i], false);
        for (uint32_t chunk : {1u, 5u, 64u}) {
            G1Xyzz got = msm(pts, ones, 9, 16, nullptr, chunk);
            if (!same(got, want1)) { printf("host msm: bal all-one scalars chunk=%u differs from the sum of the points\n", chunk); bad++; }
        }
    }
    {  // c = 16 (the engine's from 2^18 points), a short reduction segment.
        G1Xyzz got = msm(pts, sc, 16, 8, nullptr, 7);
        if (!same(got, want)) { printf("host msm: bal c=16 chunk=7 differs from the expected sum\n"); bad++; }
    }
    for (uint32_t c : {10u, 11u, 15u, 17u}) {
        G1Xyzz got = msm(pts, sc, c, 16, msm_bucket_acc_f1eo3);
        if (!same(got, want)) { printf("host msm: f1eo3 c=%u differs from the expected sum\n", c); bad++; }
    }
    {
        // Precomputed shifted bases: the table's entries are 2^offset * P (checked against
        // doublings of the points), and MSMs over it equal the plain sum, for several window
        // sizes and inversion chunks (1: one inversion per point; 7 with identities inside
        // a chunk; longer than the list), with an index list over a larger table as well.
        struct { uint32_t c, ichunk; } tables[] = {{5, 7}, {9, 1}, {13, 1000}, {20, 7}};
        for (auto& tc : tables) {
            const uint32_t c = tc.c, ichunk = tc.ichunk;
            const MsmLayout l = msm_layout(c);
            {
                const std::vector<G1Affine> t = shift_table(pts, c, ichunk);
                uint32_t wrong = 0;
                for (uint32_t i = 0; i < n; i += 37) {
                    G1Xyzz p = G1Xyzz::from_affine(pts[i]);
                    for (uint32_t k = 0; k < msm_win_offset(l, l.nwin - 1); k++) xyzz_dbl(p);
                    if (!same(p, G1Xyzz::from_affine(t[(size_t)(l.nwin - 1) * n + i]))) wrong++;
                }
                if (wrong) { printf("host msm: shift table c=%u chunk=%u: %u top-window points wrong\n", c, ichunk, wrong); bad++; }
                for (uint32_t chunk : {1u, 7u, 64u}) {
                    G1Xyzz got = msm_pre(t, n, sc, c, chunk, {});
                    if (!same(got, want)) { printf("host msm: pre c=%u ichunk=%u chunk=%u differs from the expected sum\n", c, ichunk, chunk); bad++; }
                }
            }
        }
        // Tail-style MSM: terms 0..n/2 name points 2i+1 of the table (odd points only).
        const std::vector<G1Affine> t = shift_table(pts, 13, 16);
        std::vector<uint32_t> idx;
        std::vector<Fr> tsc;
        G1Xyzz want_t = G1Xyzz::inf();
        for (uint32_t i = 1; i < n; i += 2) {
            idx.push_back(i);
            tsc.push_back(sc[i]);
            G1Xyzz term = G1Xyzz::inf();  // sc[i] * pts[i], double-and-add
            for (int k = 7; k >= 0; k--)
                for (int b = 31; b >= 0; b--) {
                    xyzz_dbl(term);
                    if ((sc[i].v[k] >> b) & 1) xyzz_add_affine_point(term, pts[i], false);
                }
            xyzz_add(want_t, term);
        }
        G1Xyzz got = msm_pre(t, n, tsc, 13, 5, idx);
        if (!same(got, want_t)) { printf("host msm: pre with an index list differs from the expected sum\n"); bad++; }
    }
    printf(bad ? "host msm test: %d FAILURES\n" : "host msm test: ok (%d failures)\n", bad);
    return bad != 0;
}
