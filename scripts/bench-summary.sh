#!/usr/bin/env bash
# Prints every bench/results/*.json as one table row (name, value, baseline, ratio).
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
files=(bench/results/*.json)
((${#files[@]})) || { echo "bench: no results"; exit 0; }
printf '%-48s %14s %-8s %-36s %14s %8s\n' name value unit baseline baseline_value ratio
for f in "${files[@]}"; do
  jq -r '[.name, (.value|tostring), .unit, .baseline, (.baseline_value|tostring), (.ratio|tostring)] | @tsv' "$f" |
    awk -F'\t' '{printf "%-48s %14s %-8s %-36s %14s %8s\n", $1, $2, $3, $4, $5, $6}'
done
