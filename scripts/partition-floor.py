#!/usr/bin/env python3
"""Device time of whole partitions against their floor, from proofscope timelines.

For each partition proved on the CUDA backend: the measured device phase (first `ntt` start
to the last `msm_*` end: the NTTs, the H MSM and the split MSMs, what the compute lock
holds) and its floor on the H200 at ~1.66e13 32-bit multiply-adds/s, with the same cost
model as `prover/src/gpu/bench.rs`:
  - an MSM of t terms: 16 windows x t bucket additions x 10 Fp products (mixed addition,
    8M + 2S) x 576 multiply-adds (12x12 limbs, x4 with the Montgomery reduction); in G2 an
    Fp2 product is 3 Fp products;
  - the scalar-one terms of a split (batch additions): one addition each;
  - the quotient H: 7 NTTs of n (a, b, c inverse then coset forward, then the inverse
    coset of the quotient), n/2 * log n butterflies of one Fr product (256 multiply-adds).
The H MSM's terms are `msm_h`'s `points`; the split MSMs' `tail` and `ones` args give theirs.

Usage: scripts/partition-floor.py TIMELINE[.gz] ...   (prints one line per timeline)
"""
import collections
import gzip
import json
import statistics
import sys

MADS_PER_S = 1.66e13
FP_PRODUCT = 576.0
FR_PRODUCT = 256.0


def msm_ms(terms, g2=False):
    return 16 * terms * 10 * FP_PRODUCT * (3 if g2 else 1) / MADS_PER_S * 1e3


def adds_ms(terms, g2=False):
    return terms * 10 * FP_PRODUCT * (3 if g2 else 1) / MADS_PER_S * 1e3


def ntt_ms(n):
    log_n = n.bit_length() - 1
    return (n // 2) * log_n * FR_PRODUCT / MADS_PER_S * 1e3


def spans(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                s = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{no}: not JSON ({e})")
            if s.get("type", "span") == "span" and "kind" in s and s.get("end_ns") is not None:
                yield s


DEVICE = ("ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2")


def partition_rows(path):
    parts = collections.defaultdict(list)
    for s in spans(path):
        if s["kind"] in DEVICE:
            parts[(s.get("job"), s.get("partition"))].append(s)
    rows = []
    for ss in parts.values():
        kinds = {s["kind"]: s for s in ss}
        if "ntt" not in kinds or "msm_h" not in kinds:
            continue
        a = kinds["ntt"]["args"]
        floor = 7 * ntt_ms(int(a["n"])) + msm_ms(int(kinds["msm_h"]["args"]["points"]))
        for k in ("msm_l", "msm_a", "msm_b_g1", "msm_b_g2"):
            if k in kinds:
                args = kinds[k]["args"]
                g2 = k == "msm_b_g2"
                floor += msm_ms(int(args.get("tail", 0)), g2) + adds_ms(int(args.get("ones", 0)), g2)
        measured = (max(s["end_ns"] for s in ss) - min(s["start_ns"] for s in ss)) / 1e6
        rows.append((measured, floor, int(a["n"])))
    return rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        rows = partition_rows(path)
        if not rows:
            print(f"{path}: no partition with ntt and msm_h spans")
            continue
        m = statistics.median(r[0] for r in rows)
        f = statistics.median(r[1] for r in rows)
        n = rows[0][2]
        print(f"{path}: {len(rows)} partitions of 2^{n.bit_length() - 1}: device phase median {m:.1f} ms "
              f"(min {min(r[0] for r in rows):.1f}, max {max(r[0] for r in rows):.1f}), floor {f:.1f} ms, {m / f:.2f}x the floor")


if __name__ == "__main__":
    main()
