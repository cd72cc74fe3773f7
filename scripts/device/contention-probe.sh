#!/usr/bin/env bash
# Issue 21: WHY do syntheses (and the GPU workers' MSM preparation) slow down when several run
# at once on the 16-core H200 host, far below the cores' count (campaign 2026-12-02: one
# synthesis 83 ms alone, 193 ms with four at once, 320 ms with twelve; prep_msm 8 ms alone,
# ~20 ms beside them)? Hypothesis: not the cores but the kernel's memory management (page
# faults of fresh allocations, munmap's TLB shootdowns across the process's threads). Test: the
# same runs under glibc malloc settings that avoid them — transparent huge pages for malloc
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) and no mmap/trim for large blocks (freed memory
# stays in the heap and is reused) — with each run's system time, page faults and context
# switches (getrusage of the child), beside the default.
#
#   run(command='bash scripts/device/unpack.sh && bash scripts/device/contention-probe.sh /tmp/cp > /tmp/cp.log 2>&1; tar -C /tmp -czf $OUT/cp.tgz cp cp.log', carry=["dist"])
#
# Outputs under OUTDIR: env.txt (kernel, glibc, THP mode), runs/<size>-<variant>-pw<N>.jsonl.gz
# (timelines), rusage.txt (one line per run). Knobs: SIZES (default "2^20 2^22"), PROOFS (6),
# PARTITIONS (8), PWS (default "1 4 8 12"), VARIANTS (default "default hugetlb noshrink both").
set -uo pipefail
OUTDIR=${1:?usage: contention-probe.sh OUTDIR}
mkdir -p "$OUTDIR/runs"
OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/../.."
. scripts/find-binary.sh contention-probe
SIZES=${SIZES:-2^20 2^22}
PROOFS=${PROOFS:-6}
PARTITIONS=${PARTITIONS:-8}
PWS=${PWS:-1 4 8 12}
VARIANTS=${VARIANTS:-default hugetlb noshrink both}
PARAMS_DIR=${PARAMS_DIR:-/tmp/proofscope-campaign-params}
mkdir -p "$PARAMS_DIR"
{
  uname -r
  ldd --version 2>&1 | head -1
  echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  echo "THP defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
  nproc
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$PS" --version
} > "$OUTDIR/env.txt" 2>&1
cat "$OUTDIR/env.txt"
# Runs a command, then prints its rusage (children) on one line.
rusage() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"rc={rc} wall_s={time.time() - t:.2f} user_s={u.ru_utime:.1f} sys_s={u.ru_stime:.1f} minflt={u.ru_minflt} majflt={u.ru_majflt} vcsw={u.ru_nvcsw} ivcsw={u.ru_nivcsw} maxrss_kib={u.ru_maxrss}")
PY
}
for size in $SIZES; do
  p="$PARAMS_DIR/params-porep-like-$(echo "$size" | tr -c '0-9a-zA-Z' '_').bin"
  if [ ! -s "$p" ]; then
    timeout 200 "$PS" setup --circuit porep-like --constraints "$size" --on gpu --params "$p.tmp" > "$OUTDIR/setup-$size.out" 2>&1 && mv "$p.tmp" "$p" || { echo "setup $size failed"; tail -3 "$OUTDIR/setup-$size.out"; exit 1; }
    [ -f "$p.tmp.pce" ] && mv "$p.tmp.pce" "$p.pce"
  fi
  for pw in $PWS; do
    for v in $VARIANTS; do
      case $v in
        default) envs=() ;;
        hugetlb) envs=(GLIBC_TUNABLES=glibc.malloc.hugetlb=1) ;;
        noshrink) envs=(MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_TOP_PAD_=1073741824) ;;
        both) envs=(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_TOP_PAD_=1073741824) ;;
        *) echo "unknown variant $v"; exit 2 ;;
      esac
      name="$(echo "$size" | tr -c '0-9a-zA-Z' '_' | tr -d '_')-$v-pw$pw"
      r="$OUTDIR/runs/$name"
      line=$(env "${envs[@]}" bash -c "$(declare -f rusage); rusage timeout 120 $PS prove --params $p --backend cuda --devices 1 --proofs $PROOFS --partitions $PARTITIONS --pw $pw --gw 2 --lock kernels --split-finalize true --finalizers 1 --seed 1 --witness-seed 7 --timeline $r.jsonl -o /tmp/cp-proofs --quiet")
      rm -rf /tmp/cp-proofs
      [ -f "$r.jsonl" ] && gzip -n -f "$r.jsonl"
      echo "$name $line" | tee -a "$OUTDIR/rusage.txt"
    done
  done
done
