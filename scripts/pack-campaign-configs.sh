#!/usr/bin/env bash
# Keeps a campaign report small enough for reports/ (which travels with every device call,
# 64 MiB with the GPU binary): each configuration folder's summary.json.gz (~15 KB),
# report.md.gz and analyze.txt (14-17 configurations per campaign, all alike) go into ONE
# solid archive, <campaign>/configs.tar.xz, stored decompressed so that xz sees the
# configurations side by side (~50 % of the gzip files). Everything else stays where it is
# (a plain report.md, parity/, waterfalls, runs/, campaign.json/md); a configuration folder
# that held nothing else is removed. Links in the campaign's top-level .md files to a packed
# file are pointed at configs.tar.xz, and one line in its README.md says how to restore.
#
#   bash scripts/pack-campaign-configs.sh REPORT_DIR            # pack (idempotent)
#   bash scripts/pack-campaign-configs.sh --unpack REPORT_DIR   # restore the files (the archive stays)
#
# Guarantee: the restored files are BYTE-IDENTICAL to the packed ones. A .gz is stored
# decompressed only when `gzip -n -9` of its content gives its exact bytes back (true of every
# campaign file so far: scripts/campaign-analyze.sh writes them so), otherwise it is stored as
# is; the archive also holds SHA256SUMS (the originals' sha256), and --unpack checks every
# restored file against it before putting it in place. The archive is written whole
# (temporary file + rename) and checked first (its members listed, every file restored from it
# and compared byte for byte with the original) before any original is removed: an
# interrupted pack loses nothing. Packing again after --unpack removes the restored files
# once they are found equal to the archive's.
set -euo pipefail
unpack=""
if [ "${1:-}" = --unpack ]; then unpack=1; shift; fi
DIR=${1:?usage: pack-campaign-configs.sh [--unpack] REPORT_DIR}
DIR=${DIR%/}
[ -d "$DIR" ] || { echo "pack-campaign-configs: $DIR: no such folder" >&2; exit 2; }
ARCH=$DIR/configs.tar.xz
SUMS=SHA256SUMS
T=$(mktemp -d); trap 'rm -rf "$T" "$ARCH.tmp"' EXIT

# restore SRC DEST: the original files from an extracted archive SRC, written under DEST (a
# .gz stored decompressed is made again with gzip -n -9), each checked against SHA256SUMS.
restore() {
  local src=$1 dest=$2 sum path
  while read -r sum path; do
    mkdir -p "$dest/$(dirname "$path")"
    if [ -f "$src/$path" ]; then cp "$src/$path" "$dest/$path"
    else gzip -n -9 -c "$src/${path%.gz}" > "$dest/$path"; fi
    [ "$(sha256sum < "$dest/$path" | cut -d' ' -f1)" = "$sum" ] \
      || { echo "pack-campaign-configs: $path: restored bytes differ from the original's (sha256)" >&2; return 1; }
  done < "$src/$SUMS"
}

if [ -n "$unpack" ]; then
  [ -f "$ARCH" ] || { echo "pack-campaign-configs: $ARCH: nothing to unpack" >&2; exit 2; }
  mkdir "$T/x" "$T/out"
  tar -C "$T/x" -xJf "$ARCH"
  restore "$T/x" "$T/out"
  n=0
  while read -r _ path; do
    mkdir -p "$DIR/$(dirname "$path")"
    cp "$T/out/$path" "$DIR/$path.tmp" && mv "$DIR/$path.tmp" "$DIR/$path"
    n=$((n + 1))
  done < "$T/x/$SUMS"
  echo "pack-campaign-configs: restored $n files into $DIR" >&2
  exit 0
fi

# same_as_originals ARCHIVE XDIR OUTDIR RC WHY_NAMES WHY_BYTES: extract ARCHIVE into XDIR,
# restore its files into OUTDIR, and exit with RC unless they are exactly "${files[@]}", byte
# for byte the originals in $DIR.
same_as_originals() {
  local arch=$1 x=$2 out=$3 rc=$4 names=$5 bytes=$6 p
  mkdir -p "$x" "$out"
  tar -C "$x" -xJf "$arch"
  restore "$x" "$out"
  [ "$(cut -d' ' -f3- "$x/$SUMS")" = "$(printf '%s\n' "${files[@]}")" ] \
    || { echo "pack-campaign-configs: $arch: $names" >&2; exit "$rc"; }
  for p in "${files[@]}"; do
    cmp -s "$out/$p" "$DIR/$p" || { echo "pack-campaign-configs: $DIR/$p: $bytes ($arch)" >&2; exit "$rc"; }
  done
}

shopt -s nullglob
files=()
for f in "$DIR"/*/summary.json.gz "$DIR"/*/report.md.gz "$DIR"/*/analyze.txt; do files+=("${f#"$DIR"/}"); done
if [ ${#files[@]} -gt 0 ]; then
  mapfile -t files < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort)
  if [ -f "$ARCH" ]; then
    # Packed before (then unpacked): the files must be exactly the archive's.
    same_as_originals "$ARCH" "$T/x" "$T/out" 2 "exists beside other configuration files: unpack, then remove one" "differs from the archive's: unpack, then remove one"
  else
    mkdir "$T/in" "$T/check" "$T/out"
    for p in "${files[@]}"; do
      mkdir -p "$T/in/$(dirname "$p")"
      if [[ $p == *.gz ]] && gunzip -c "$DIR/$p" > "$T/in/${p%.gz}" \
          && gzip -n -9 -c "$T/in/${p%.gz}" | cmp -s - "$DIR/$p"; then
        :  # stored decompressed: gzip -n -9 makes the same bytes again
      else
        rm -f "$T/in/${p%.gz}"
        cp "$DIR/$p" "$T/in/$p"
        [[ $p != *.gz ]] || echo "pack-campaign-configs: $p: not remade by gzip -n -9, stored as is" >&2
      fi
    done
    (cd "$DIR" && sha256sum -- "${files[@]}") > "$T/in/$SUMS"
    # Members grouped by file name (all summaries, then all reports...): like beside like for xz.
    (cd "$T/in" && { find . -type f ! -name "$SUMS" | sed 's|^\./||' | awk -F/ '{print $NF "\t" $0}' | LC_ALL=C sort | cut -f2; echo "$SUMS"; } \
      | tar -cf - -T - --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=u=rw,go=r) | xz -9e -T2 > "$ARCH.tmp"
    [ "$(tar -tJf "$ARCH.tmp" | LC_ALL=C sort)" = "$(cd "$T/in" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)" ] \
      || { echo "pack-campaign-configs: $ARCH.tmp does not list every file" >&2; exit 1; }
    rm -rf "$T/out"
    same_as_originals "$ARCH.tmp" "$T/check" "$T/out" 1 "SHA256SUMS does not name every file" "not restored byte for byte from the new archive"
    mv "$ARCH.tmp" "$ARCH"
  fi
  for p in "${files[@]}"; do rm -f "$DIR/$p"; done
  for d in $(printf '%s\n' "${files[@]%/*}" | LC_ALL=C sort -u); do rmdir --ignore-fail-on-non-empty "$DIR/$d"; done
fi
[ -f "$ARCH" ] || { echo "pack-campaign-configs: $DIR: no configuration files and no $ARCH" >&2; exit 2; }

# Links to packed files (in the campaign's own .md files) now point at the archive.
packed=$(tar -xJOf "$ARCH" "$SUMS" | cut -d' ' -f3-)
for md in "$DIR"/*.md; do
  for p in $packed; do
    if grep -qF "]($p)" "$md"; then
      P=$p perl -pi -e 's/\]\(\Q$ENV{P}\E\)/](configs.tar.xz)/g' "$md"
    fi
  done
done
if [ -f "$DIR/README.md" ] && ! grep -qF "pack-campaign-configs.sh --unpack" "$DIR/README.md"; then
  kinds=$(for k in summary.json.gz report.md.gz analyze.txt; do grep -q "/$k\$" <<< "$packed" && echo "\`$k\`"; done)
  kinds=$(echo "$kinds" | sed '$!s/$/,/' | tr '\n' ' ' | sed 's/, \([^ ]*\) $/ and \1/; s/ $//')
  printf '\nThe configurations'"'"' %s are packed into one solid archive, [configs.tar.xz](configs.tar.xz), to keep reports/ small; `bash scripts/pack-campaign-configs.sh --unpack reports/%s` restores them byte for byte.\n' \
    "$kinds" "$(basename "$DIR")" >> "$DIR/README.md"
fi
echo "pack-campaign-configs: $DIR: $(du -sh "$DIR" | cut -f1)" >&2
