#!/usr/bin/env bash
# A soak of the Kubernetes decoders against Go: writes more sets of refgen stream pairs (the realistic objects and
# a fresh fuzzed object of every kind per set, salts soak-FIRST .. soak-(FIRST+COUNT-1)) into a scratch folder and
# checks each with scripts/soak-kubernetes-fixtures.ts (what the tests ask of the committed fixtures). FILL is
# default (the committed fixtures' fuzzer settings), dense (few nils, up to four elements per slice and map, objects
# up to 512 KiB of JSON) or both (two sets per salt). Needs Go (the toolchain of tools/refgen/go.mod) and
# node_modules; leaves nothing behind unless a pair differs, in which case the folders are kept and named.
#
#   tools/refgen/soak.sh [COUNT=20] [FIRST=1] [FILL=both]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
count="${1:-20}"
first="${2:-1}"
fill="${3:-both}"
case "$fill" in
  default) fills=(default) ;;
  dense) fills=(dense) ;;
  both) fills=(default dense) ;;
  *) echo "usage: soak.sh [COUNT] [FIRST] [default|dense|both]" >&2; exit 2 ;;
esac

scratch="$(mktemp -d)"
(cd "$here" && go build -o "$scratch/fixtures" ./cmd/fixtures)
dirs=()
for ((i = first; i < first + count; i++)); do
  for f in "${fills[@]}"; do
    name="soak-$i-$f"
    flags=()
    [[ "$f" == dense ]] && flags=(-dense)
    "$scratch/fixtures" -salt "soak-$i" "${flags[@]}" -out "$scratch/$name" 2>"$scratch/$name.log" ||
      { cat "$scratch/$name.log" >&2; echo "soak: the Go side failed for $name; kept $scratch" >&2; exit 1; }
    dirs+=("$scratch/$name")
  done
done
if (cd "$root" && node --import tsx scripts/soak-kubernetes-fixtures.ts "${dirs[@]}"); then
  rm -rf "$scratch"
else
  echo "soak: differences found; the stream pairs are kept in $scratch" >&2
  exit 1
fi
