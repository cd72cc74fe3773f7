# Sourced by the campaign scripts (after `cd` to the repository root): sets PS to the
# proofscope binary — $PROOFSCOPE, else dist/proofscope (unpacked from dist/proofscope.xz or
# .gz, the GPU binary of scripts/build-gpu-binary.sh), else target/release/proofscope — and
# exits 2 naming the caller ($1) when there is none.
if [ -z "${PROOFSCOPE:-}" ]; then
  { [ -f dist/proofscope.xz ] || [ -f dist/proofscope.gz ]; } && bash scripts/device/unpack.sh
  for b in dist/proofscope target/release/proofscope; do
    if [ -x "$b" ]; then PROOFSCOPE=$b; break; fi
  done
fi
PS=${PROOFSCOPE:-dist/proofscope}
chmod +x "$PS" 2>/dev/null || true
[ -x "$PS" ] || { echo "$1: no binary at $PS (bash scripts/build-gpu-binary.sh, or set PROOFSCOPE)" >&2; exit 2; }
