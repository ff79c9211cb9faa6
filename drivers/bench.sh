#!/bin/bash
# Driver benchmarks (run by `make bench` via mk/java.mk after the reactor is built): needs root (veth pair),
# the agent binary (agent/build/metron-agent). Writes bench/results/drivers_*.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$here"
mvn -B -q -Dstyle.color=never test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath \
    -Dmdep.includeScope=test
machine="$(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
# BENCH_SMOKE=1 (make test): one round each, into BENCH_RESULTS (a scratch directory), to prove the bench runs.
smoke=(); [[ ${BENCH_SMOKE:-0} == 1 ]] && smoke=(-Dmetron.bench.smoke=true)
java ${METRON_ADD_OPENS:-} "${smoke[@]}" -Dmetron.agent.bin="$root/agent/build/metron-agent" \
    -cp "target/classes:target/test-classes:$(cat target/bench.classpath)" \
    org.metron.drivers.server.NicRuleInstallBench "${BENCH_RESULTS:-$root/bench/results}" "$machine"
