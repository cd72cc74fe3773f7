#!/usr/bin/env bash
# Execute every notebook in notebooks/ top to bottom on the tables in reports/, so they
# cannot rot. Called by .ci/run; no GPU needed.
#
#   bash scripts/ci-notebooks.sh                 # all notebooks
#   bash scripts/ci-notebooks.sh notebooks/sweep.ipynb
#   NB_VENV=/path/to/venv NB_CELL_TIMEOUT=300 NB_OUT=dir bash scripts/ci-notebooks.sh
#
# 1. a venv under $HOME/.cache/proofscope-nbvenv (or $NB_VENV), created if missing;
# 2. notebooks/requirements.txt installed into it unless every pin is already satisfied
#    (so a warm cache works offline);
# 3. a `python3` Jupyter kernel in the venv (registered with --sys-prefix if missing);
# 4. checks that the committed .ipynb match notebooks/make_notebooks.py and carry no outputs;
# 5. executes each with nbclient (timeout per cell), cwd = notebooks/. Exit 1 if any cell
#    errors (the failing cell and traceback are printed), 2 on a setup problem.
#    With NB_OUT the executed notebooks (with outputs) are written there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${NB_VENV:-$HOME/.cache/proofscope-nbvenv}
REQ=notebooks/requirements.txt
PY=$VENV/bin/python

if [ ! -x "$PY" ]; then
  echo "ci-notebooks: creating venv $VENV" >&2
  python3 -m venv "$VENV" || { echo "ci-notebooks: cannot create a venv (python3 -m venv)" >&2; exit 2; }
fi

# Are all pins of requirements.txt installed at exactly that version?
satisfied() {
  "$PY" - "$REQ" <<'EOF'
import sys
from importlib.metadata import version, PackageNotFoundError
ok = True
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, want = line.partition("==")
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    if have != want:
        print(f"ci-notebooks: {name}: have {have}, want {want}", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
EOF
}
if ! satisfied; then
  echo "ci-notebooks: pip install -r $REQ" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$REQ" || { echo "ci-notebooks: pip install failed" >&2; exit 2; }
  satisfied || { echo "ci-notebooks: the pins are still not satisfied after pip install" >&2; exit 2; }
fi

# Prefer the venv's kernels over any user-level `python3` kernel pointing elsewhere.
export JUPYTER_PREFER_ENV_PATH=1
if ! "$PY" -m jupyter kernelspec list 2>/dev/null | grep -q "$VENV.*python3\|python3.*$VENV"; then
  echo "ci-notebooks: registering the python3 kernel in $VENV" >&2
  "$PY" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (proofscope)" >/dev/null
fi

# The committed notebooks must be exactly what the generator writes (no outputs, no drift).
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen/notebooks"
cp notebooks/make_notebooks.py "$gen/notebooks/"
python3 "$gen/notebooks/make_notebooks.py" >/dev/null
for f in "$gen"/notebooks/*.ipynb; do
  if ! cmp -s "$f" "notebooks/$(basename "$f")"; then
    echo "ci-notebooks: notebooks/$(basename "$f") differs from what notebooks/make_notebooks.py writes (edit the generator, rerun it, and do not commit outputs)" >&2
    exit 1
  fi
done

if [ $# -gt 0 ]; then NOTEBOOKS=("$@"); else NOTEBOOKS=(notebooks/*.ipynb); fi
"$PY" - "${NOTEBOOKS[@]}" <<'EOF'
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

timeout = int(os.environ.get("NB_CELL_TIMEOUT", "300"))
out_dir = Path(os.environ["NB_OUT"]) if os.environ.get("NB_OUT") else None
failed = []
for arg in sys.argv[1:]:
    path = Path(arg).resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    t = time.monotonic()
    try:
        client.execute()
        print(f"ci-notebooks: {arg}: ok ({len(nb.cells)} cells, {time.monotonic() - t:.1f} s)")
    except (CellExecutionError, CellTimeoutError) as e:
        print(f"ci-notebooks: {arg}: FAILED\n{e}", file=sys.stderr)
        failed.append(arg)
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_dir / path.name)
if failed:
    print(f"ci-notebooks: {len(failed)} notebook(s) failed: {' '.join(failed)}", file=sys.stderr)
    sys.exit(1)
EOF
