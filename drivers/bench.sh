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
java ${METRON_ADD_OPENS:-} -Dmetron.agent.bin="$root/agent/build/metron-agent" \
    -cp "target/classes:target/test-classes:$(cat target/bench.classpath)" \
    org.metron.drivers.server.NicRuleInstallBench "$root/bench/results" "$machine"
