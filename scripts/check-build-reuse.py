#!/usr/bin/env python3
"""Fails when the README's two commands would build dependencies with different features.

`cargo run --features cuda -- demo` builds the proofscope package alone; `cargo test
--workspace --features cuda` builds every member with its dev-dependencies, whose features
unify into shared dependencies. When a shared dependency ends up with other features in the
second build, cargo rebuilds it and everything above it (polars among them), and the test
command takes as long as the first. This compares the feature set of every package the first
command builds with the set the second gives it (`cargo tree`, offline, a second or two).
"""
import subprocess, sys

def features(args):
    out = subprocess.run(["cargo", "tree", "--features", "cuda", "--prefix", "none", "-f", "{p} [{f}]", *args],
                         check=True, capture_output=True, text=True).stdout
    d = {}
    for line in out.splitlines():
        line = line.strip()
        if not line or "[" not in line:
            continue
        name = line.split(" [")[0].replace(" (*)", "").strip()
        d[name] = line[line.rfind("[") + 1:line.rfind("]")]
    return d

run = features(["-p", "proofscope", "-e", "normal,build"])
test = features(["--workspace", "-e", "normal,build,dev"])
diff = [(k, run[k], test[k]) for k in sorted(run) if k in test and run[k] != test[k]]
for k, a, b in diff:
    print(f"check-build-reuse: {k}: run [{a}] vs test [{b}]", file=sys.stderr)
if diff:
    print(f"check-build-reuse: {len(diff)} packages would be rebuilt by the test command; pin their features in Cargo.toml", file=sys.stderr)
    sys.exit(1)
print(f"check-build-reuse: the {len(run)} packages of the first command build with the same features in the test command")
