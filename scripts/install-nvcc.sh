#!/usr/bin/env bash
# Installs nvcc 13.0 from PyPI (pinned: unpinned installs pull 13.5, whose PTX the H200's
# 13.0 driver rejects) into $HOME/.cache/nvcc13, once. Contract (used by .ci/run):
# prints ONLY the path of the nvcc binary on stdout; logs go to stderr; non-zero on failure.
set -euo pipefail
dest="${NVCC_PREFIX:-$HOME/.cache/nvcc13}"
pkgs="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85"
stamp="$dest/.installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$pkgs" ]; then
  echo "install-nvcc: pip install --target $dest $pkgs" >&2
  python3 -m pip install -q --disable-pip-version-check --target "$dest" $pkgs >&2
  echo "$pkgs" > "$stamp"
fi
nvcc=$(find "$dest" -type f -name nvcc -path '*bin*' | head -n 1)
[ -n "$nvcc" ] && [ -x "$nvcc" ] || { echo "install-nvcc: nvcc not found under $dest" >&2; exit 1; }
echo "$nvcc"
