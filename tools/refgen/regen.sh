#!/usr/bin/env bash
# Regenerates what tools/refgen produces, with Go (the toolchain of tools/refgen/go.mod) and no network beyond
# the Go module proxy for the module's requirements.
#
#   tools/refgen/regen.sh             run every step, in order, into the repository
#   tools/refgen/regen.sh STEP...      run only these steps (names below)
#   tools/refgen/regen.sh check        run every step into a scratch copy and fail if any file would change
#
# Steps (each a function step_<name> below; add a step by writing its function and listing it in STEPS):
#   schema    tools/refgen/schema.json from the Go types (cmd/schema), cross-checked against the modules'
#             generated.proto files (cmd/schemacheck)
#   decoders  src/codec/kubernetes/generated/*.ts from schema.json (scripts/gen-kubernetes.ts; Node, no Go)
#   vectors   fixtures/kubernetes/vectors/*.json: Go's renderings of strings, times, durations, quantities (cmd/vectors)
#   fixtures  fixtures/kubernetes/streams/*.{pb,json} and fixtures/kubernetes/index.json (cmd/fixtures)
#   merge     fixtures/kubernetes/merge/vectors.json: Go's JSON of objects whose bytes repeat fields and carry
#             unknown groups (cmd/mergevectors; reads the streams)
#   damage    fixtures/kubernetes/damage/{vectors,envelopes}.json: Go's JSON (or error) for damaged copies of the
#             objects, and what runtime.Unknown's Unmarshal makes of damaged envelopes (cmd/damagevectors; reads the
#             streams)
#   record    fixtures/kubernetes/captures/*.bin and captures/index.json (cmd/record; needs the streams)
#
# Every step writes only into the folders named by the OUT_* variables below, and replaces their contents
# whole, so running the script twice gives the same files. The captures carry the server's Date header: a new
# recording that differs from the file in place only in Date (and, over HTTP/2, in the order of connection-level
# control frames) leaves that file untouched (pass RECORD_FLAGS=-force to replace it anyway), so a regeneration
# with nothing else changed changes no file.
#
# A new step that writes somewhere else gets its own OUT_* variable, and check must point that one into the
# scratch folder too and diff it (see the check block at the end).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

STEPS=(schema decoders vectors fixtures merge damage record)

# Output folders. check points them into a scratch copy.
OUT_FIXTURES="${OUT_FIXTURES:-$root/fixtures/kubernetes}"
OUT_SCHEMA="${OUT_SCHEMA:-$here/schema.json}"
DECODERS_FLAGS="${DECODERS_FLAGS:-}"

step_schema() {
  (cd "$here" && go run ./cmd/schema >"$OUT_SCHEMA.tmp" && mv "$OUT_SCHEMA.tmp" "$OUT_SCHEMA")
  # shellcheck disable=SC2046 # one argument per module folder
  (cd "$here" && go run ./cmd/schemacheck "$OUT_SCHEMA" $(go list -m -f '{{.Dir}}' k8s.io/api k8s.io/apimachinery))
}

step_vectors() {
  (cd "$here" && go run ./cmd/vectors -out "$OUT_FIXTURES/vectors")
}

step_decoders() {
  # shellcheck disable=SC2086 # DECODERS_FLAGS is a list of flags (check passes --check)
  (cd "$root" && node --import tsx scripts/gen-kubernetes.ts --schema "$OUT_SCHEMA" $DECODERS_FLAGS)
}

step_fixtures() {
  (cd "$here" && go run ./cmd/fixtures -out "$OUT_FIXTURES")
  # The per-file list in fixtures/README.md follows the committed streams (npm run check verifies it).
  if [[ "$OUT_FIXTURES" == "$root/fixtures/kubernetes" ]]; then
    (cd "$root" && node --import tsx scripts/fixtures-readme.ts)
  fi
}

step_merge() {
  (cd "$here" && go run ./cmd/mergevectors -fixtures "$OUT_FIXTURES")
}

step_damage() {
  (cd "$here" && go run ./cmd/damagevectors -fixtures "$OUT_FIXTURES")
}

step_record() {
  # shellcheck disable=SC2086 # RECORD_FLAGS is a list of flags
  (cd "$here" && go run ./cmd/record -streams "$OUT_FIXTURES/streams" -out "$OUT_FIXTURES/captures" ${RECORD_FLAGS:-})
}

run_steps() {
  for step in "$@"; do
    if ! declare -F "step_$step" >/dev/null; then
      echo "regen.sh: unknown step '$step' (steps: ${STEPS[*]}, or check)" >&2
      exit 2
    fi
    echo "regen.sh: $step" >&2
    "step_$step"
  done
}

summary() {
  local dir="$1" files
  files=("$dir/index.json" "$dir/streams" "$dir/captures")
  echo "regen.sh: $(find "${files[@]}" -type f -printf '%s\n' | awk '{n++; s+=$1} END {print n " files, " s}') bytes in $dir/{index.json,streams,captures}" >&2
}

if [[ "${1:-}" == "check" ]]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  committed="$OUT_FIXTURES"
  # Start from the files in place, so that record can tell a Date-only difference from a real one.
  mkdir -p "$scratch/fixtures"
  if [[ -d "$committed" ]]; then cp -a "$committed/." "$scratch/fixtures/"; fi
  OUT_FIXTURES="$scratch/fixtures"
  OUT_SCHEMA="$scratch/schema.json"
  DECODERS_FLAGS="--check"
  run_steps "${STEPS[@]}"
  if diff -q "$here/schema.json" "$OUT_SCHEMA" && diff -r -q "$committed" "$OUT_FIXTURES"; then
    echo "regen.sh: check: regeneration changes nothing" >&2
  else
    echo "regen.sh: check: regeneration changes the files above" >&2
    exit 1
  fi
  exit 0
fi

if [[ $# -eq 0 ]]; then set -- "${STEPS[@]}"; fi
run_steps "$@"
summary "$OUT_FIXTURES"
