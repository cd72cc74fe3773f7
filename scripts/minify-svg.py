#!/usr/bin/env python3
"""Shrink the analyzer's SVG charts in place without changing what they draw, so that reports/
(which travels with every device call, 35 MB at most) keeps its pictures: drops attributes that
restate SVG defaults (opacity="1"; stroke="none" where no group could pass a stroke down) and
rounds coordinates and sizes to 0.01 px. Writes each file whole (temporary file + rename) and
prints bytes before and after. Usage: scripts/minify-svg.py FILE.svg..."""
import os
import re
import sys
import tempfile

NUM = re.compile(r'(?<=")(-?\d+\.\d{3,})(?=")|(?<=[ ,])(-?\d+\.\d{3,})(?=[ ,"])')


def round_num(m):
    s = m.group(0)
    v = round(float(s), 2)
    out = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


def minify(text):
    if not text.lstrip().startswith("<svg"):
        raise ValueError("not an SVG written by the analyzer (does not start with <svg)")
    text = text.replace(' opacity="1"', "")
    if "<g" not in text:
        text = text.replace(' stroke="none"', "")
    return NUM.sub(round_num, text)


def main(paths):
    total = [0, 0]
    for p in paths:
        with open(p, encoding="utf-8") as f:
            before = f.read()
        after = minify(before)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(p) or ".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(after)
        os.replace(tmp, p)
        b, a = len(before.encode()), len(after.encode())
        total[0] += b
        total[1] += a
        print(f"{p}: {b} -> {a} bytes")
    print(f"all: {total[0]} -> {total[1]} bytes")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        main(sys.argv[1:])
    except (OSError, ValueError) as e:
        sys.exit(f"minify-svg: {e}")
