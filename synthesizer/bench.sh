#!/usr/bin/env bash
# Synthesizer benchmark (make bench): median time and peak heap to synthesize + split + compile
# FW(n)->NAPT->LB for OpenFlow 1.3, n = 250..4000, side by side with a naive pairwise-product synthesis of the
# same chain. Writes bench/results/synth_*.json. Runs with a 512 MB heap cap (the target peak).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jar="$(ls synthesizer/target/metron-synthesizer-*.jar 2>/dev/null | grep -v -- '-sources\|-tests' | head -1 || true)"
if [ -z "$jar" ] || [ -n "$(find synthesizer/src/main -newer "$jar" -type f | head -1)" ]; then
  mvn -B -q -pl synthesizer -DskipTests install
  jar="$(ls synthesizer/target/metron-synthesizer-*.jar | grep -v -- '-sources\|-tests' | head -1)"
fi
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/ [0-9]*-Core.*//; s/ Processor//' || echo unknown)"
machine="$cpu, $(nproc) cores"
# BENCH_SMOKE=1 (make test): one round each, into BENCH_RESULTS (a scratch directory), to prove the bench runs.
smoke=(); [[ ${BENCH_SMOKE:-0} == 1 ]] && smoke=(-Dmetron.bench.smoke=true)
results=${BENCH_RESULTS:-bench/results}
mkdir -p "$results"
exec nice java -Xmx512m "${smoke[@]}" -cp "$jar" org.metron.synth.bench.SynthBench "$results" "$machine"
