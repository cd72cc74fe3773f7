// Signed-digit window layout of the MSM scalars, shared by the digit kernels (msm.cu) and the
// host test (cuda/test/host_field_test.cpp), so the decomposition is checked without a GPU.
//
// Why this file exists: the window size c is a tuning knob (15..20 on the H200), and a plain
// "nwin = 255/c + 1 windows of c bits" layout leaves, for most c, a top window with only a
// few distinct digits (c = 18: bits 252..254, 4 buckets) or a carry-only window (c = 15, 17:
// about half of all scalars carry into it): a handful of buckets then receive most of the
// points and one thread adds millions of them. Instead:
//   * a scalar s > (r-1)/2 is replaced by r - s and its point negated (s*P = (r-s)*(-P)),
//     so every scalar is < r/2 < 2^254;
//   * the 255 bits are split into nwin = ceil(255/c) windows of nearly equal widths
//     (width base+1 for the top `extra` windows, base below, base = 255 / nwin,
//     extra = 255 % nwin), so every window's digits spread over its buckets;
//   * digits are signed: a window value v (plus the carry from below) above 2^(width-1)
//     becomes v - 2^width with a carry of one into the next window. The top window covers
//     bit 254, which is zero, so its value is < 2^(width-1) and, with a carry, at most
//     2^(width-1): no carry leaves the top window and no extra window is needed.
// Buckets: window w owns keys w*nb .. w*nb + 2^(width_w - 1) - 1 with nb = 2^(wmax-1) (the
// widest window's count); key w*nb + |d| - 1 collects the points of digit d (sign apart).
#pragma once
#include "field.cuh"

struct MsmLayout {
    uint32_t nwin;   // number of windows
    uint32_t base;   // width of the lower windows
    uint32_t extra;  // the top `extra` windows are one bit wider
};

FI MsmLayout msm_layout(uint32_t c) {
    MsmLayout l;
    l.nwin = (255 + c - 1) / c;
    l.base = 255 / l.nwin;
    l.extra = 255 % l.nwin;
    return l;
}

FI uint32_t msm_win_width(const MsmLayout& l, uint32_t w) { return l.base + (w >= l.nwin - l.extra ? 1u : 0u); }
FI uint32_t msm_win_offset(const MsmLayout& l, uint32_t w) {
    const uint32_t first_wide = l.nwin - l.extra;
    return w * l.base + (w > first_wide ? w - first_wide : 0u);
}

// (r-1)/2 for the scalar field, little-endian 32-bit limbs.
FI uint32_t fr_half(int i) {
    switch (i) {
    case 0: return 0x80000000u; case 1: return 0x7fffffffu; case 2: return 0x7fff2dffu; case 3: return 0xa9ded201u;
    case 4: return 0x04d0ec02u; case 5: return 0x199cec04u; case 6: return 0x94cebea4u; default: return 0x39f6d3a9u;
    }
}

// Canonical scalar s (< r) -> s or r - s, whichever is <= (r-1)/2; returns whether it negated.
FI bool msm_fold_scalar(uint32_t s[8]) {
    // s > half  <=>  half - s borrows.
    (void)sub_cc(fr_half(0), s[0]);
    _Pragma("unroll") for (int k = 1; k < 8; k++) (void)subc_cc(fr_half(k), s[k]);
    const bool neg = subc(0, 0) != 0;
    if (neg) {
        s[0] = sub_cc(FrParams::p(0), s[0]);
        _Pragma("unroll") for (int k = 1; k < 8; k++) s[k] = subc_cc(FrParams::p(k), s[k]);
    }
    return neg;
}

// Signed digit of window w of a folded scalar, with the carry of the windows below it;
// returns the digit in [-2^(width-1), 2^(width-1)] and updates the carry.
FI int32_t msm_window_digit(const uint32_t s[8], const MsmLayout& l, uint32_t w, uint32_t& carry) {
    const uint32_t off = msm_win_offset(l, w), width = msm_win_width(l, w);
    const uint32_t word = off >> 5, sh = off & 31;
    uint32_t v = s[word] >> sh;
    if (sh + width > 32 && word + 1 < 8) v |= s[word + 1] << (32 - sh);
    v = (v & ((1u << width) - 1)) + carry;
    if (v > (1u << (width - 1))) { carry = 1; return (int32_t)v - (int32_t)(1u << width); }
    carry = 0;
    return (int32_t)v;
}
