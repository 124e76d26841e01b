#!/usr/bin/env bash
# Rebuilds the stamp library from its journals: each assets/stamps/src/NAME.json is replayed on a
# flat 512x512 R16 document and written as a 16-bit gray PNG (the lowest height -> 0, the highest
# -> 65535). Run from the repository root: bash assets/stamps/make.sh [path/to/scarp]
set -euo pipefail
scarp=${1:-scarp}
cd "$(dirname "$0")"
for journal in src/*.json; do
  name=$(basename "$journal" .json)
  "$scarp" apply --journal "$journal" --out "$name.png"
done
