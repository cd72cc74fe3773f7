#!/usr/bin/env bash
# Run-to-run noise of the campaign: the same grid measured twice (two campaign.log files of
# scripts/campaign.sh, same binary and machine) -> a Markdown table of each configuration's
# s/proof in both runs and their difference. A model cannot be judged closer to the
# measurements than the measurements are to themselves: this is the floor under the MAPE.
#
#   bash scripts/campaign-noise.sh A/campaign.log B/campaign.log [OUT.md]
#
# The figure compared is what `prove` printed ("X s/proof": makespan / proofs), the one both
# logs carry; configurations present in only one log are listed as such.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: campaign-noise.sh A/campaign.log B/campaign.log [OUT.md]" >&2; exit 2; }
for f in "$1" "$2"; do [ -f "$f" ] || { echo "campaign-noise: $f: no such file" >&2; exit 2; }; done
python3 - "$1" "$2" <<'PY' > "${3:-/dev/stdout}"
import re, statistics, sys
def parse(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.search(r"\]: (\S+): ok wall_s=\S+; .*?; ([\d.]+) s/proof", line)
        if m and m.group(1) != "probe":
            out[m.group(1)] = float(m.group(2))
    return out
a, b = parse(sys.argv[1]), parse(sys.argv[2])
if not a or not b:
    sys.exit(f"campaign-noise: no finished runs in {sys.argv[1] if not a else sys.argv[2]}")
print("# Run-to-run noise: the same campaign grid measured twice\n")
print(f"A = `{sys.argv[1]}`, B = `{sys.argv[2]}`; s/proof = makespan ÷ proofs as `prove` printed it; difference = (B − A) ÷ A.\n")
print("| config | A s/proof | B s/proof | difference |")
print("|---|---:|---:|---:|")
diffs = []
for k in sorted(set(a) | set(b)):
    if k in a and k in b:
        d = (b[k] - a[k]) / a[k] * 100
        diffs.append(abs(d))
        print(f"| {k} | {a[k]:.2f} | {b[k]:.2f} | {d:+.1f}% |")
    else:
        print(f"| {k} | {a.get(k, '–')} | {b.get(k, '–')} | only in one run |")
if diffs:
    print(f"\nMean absolute difference over {len(diffs)} configurations: **{statistics.mean(diffs):.1f} %** (median {statistics.median(diffs):.1f} %, largest {max(diffs):.1f} %).")
PY
