#!/bin/sh
# scripts/fetch_pgp.sh -- fetch the PGP web-of-trust 2009 temporal graph and
# convert it to a time-ordered edge stream, without installing anything.
#
#   scripts/fetch_pgp.sh [DATA_DIR]      (default: $GSNAP_DATA_DIR or data/)
#   scripts/fetch_pgp.sh --force [DIR]   re-fetch even if DIR/pgp.tsv exists
#
# Result: DATA_DIR/pgp.tsv, lines "src<TAB>dst<TAB>t" (graph-tool vertex ids
# 0..39795, t = Unix time of one signature), sorted by t (stable), all events
# kept, including the 32 junk dates outside 1991-2009 (see docs/data.md;
# `gt2tsv --drop-junk` drops them).
# Cached: does nothing when DATA_DIR/pgp.tsv exists.
#
# How: `apt-get download python3-graph-tool` (Debian bookworm: 2.45+ds-10,
# ~45 MB .deb) into a temporary directory, extract only
# graph_tool/collection/pgp-strong-2009.gt.gz with dpkg-deb --fsys-tarfile | tar,
# convert with $BUILD/tools/gt2tsv (built with `make tools` if missing;
# BUILD defaults to build). The .deb and the .gt.gz are deleted afterwards:
# the .gt.gz holds the vertex property `uid` (real names and e-mail
# addresses), which is never copied into DATA_DIR.
# Licence of the data: public-domain scientific data per Debian's copyright
# file; cite Richters & Peixoto, PLoS ONE 6(4) e18384 (2011).
# Exit: 0 ok (or cached), 1 failure (message says what is missing), 64 usage.
set -eu

force=0
dir=""
for a in "$@"; do
    case "$a" in
        --force) force=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "fetch_pgp.sh: unknown option '$a'" >&2; exit 64 ;;
        *) [ -z "$dir" ] || { echo "fetch_pgp.sh: one data directory only" >&2; exit 64; }; dir="$a" ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$dir" ] || dir="${GSNAP_DATA_DIR:-$root/data}"
out="$dir/pgp.tsv"
if [ -e "$out" ] && [ "$force" -eq 0 ]; then
    echo "fetch_pgp.sh: $out exists (cached; --force to re-fetch)"
    exit 0
fi

for tool in apt-get apt-cache dpkg-deb tar gzip; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "fetch_pgp.sh: '$tool' not found: this script needs a Debian-based system (apt, dpkg, tar, gzip)" >&2
        exit 1
    }
done

BUILD="${BUILD:-build}"
case "$BUILD" in /*) gt2tsv="$BUILD/tools/gt2tsv" ;; *) gt2tsv="$root/$BUILD/tools/gt2tsv" ;; esac
if [ ! -x "$gt2tsv" ]; then
    echo "fetch_pgp.sh: building $gt2tsv"
    make -s -C "$root" BUILD="$BUILD" "$BUILD/tools/gt2tsv" || {
        echo "fetch_pgp.sh: could not build gt2tsv (make -C $root BUILD=$BUILD tools)" >&2; exit 1; }
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.fetch-pgp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# apt-get download writes into the current directory as user _apt when it can.
chmod 755 "$tmp"

pkg=python3-graph-tool
candidate() { apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }'; }
cand=$(candidate)
if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "fetch_pgp.sh: $pkg not in the apt package lists; running apt-get update"
        apt-get update -qq || true
        cand=$(candidate)
    fi
fi
if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
    echo "fetch_pgp.sh: package $pkg has no installation candidate in the apt sources." >&2
    echo "  It is in Debian main (bookworm: 2.45+ds-10). Add e.g." >&2
    echo "    deb http://deb.debian.org/debian bookworm main" >&2
    echo "  to /etc/apt/sources.list and run 'apt-get update' (as root)." >&2
    exit 1
fi

echo "fetch_pgp.sh: apt-get download $pkg ($cand)"
(cd "$tmp" && apt-get download -q "$pkg" 2>&1 | grep -v 'Download is performed unsandboxed' >&2) || true
deb=$(find "$tmp" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
if [ -z "$deb" ]; then
    echo "fetch_pgp.sh: apt-get download $pkg failed (network or apt sources; see messages above)" >&2
    exit 1
fi

member='*/graph_tool/collection/pgp-strong-2009.gt.gz'
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards "$member"
gt=$(find "$tmp" -name pgp-strong-2009.gt.gz -type f | head -n 1)
if [ -z "$gt" ]; then
    echo "fetch_pgp.sh: $deb has no graph_tool/collection/pgp-strong-2009.gt.gz" >&2
    exit 1
fi
rm -f "$deb"

echo "fetch_pgp.sh: converting $(basename "$gt") ($(wc -c < "$gt") bytes, gzip) with gt2tsv --time-order"
gzip -dc "$gt" | "$gt2tsv" --time-order > "$tmp/pgp.tsv"
mv "$tmp/pgp.tsv" "$out"
lines=$(wc -l < "$out")
bytes=$(wc -c < "$out")
echo "fetch_pgp.sh: wrote $out: $lines events, $bytes bytes"
if [ "$lines" -ne 592752 ]; then
    echo "fetch_pgp.sh: warning: expected 592752 events (python3-graph-tool 2.45+ds-10), got $lines" >&2
fi
