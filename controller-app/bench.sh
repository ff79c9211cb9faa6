#!/usr/bin/env bash
# Controller benchmarks (run by `make bench` through mk/java.mk), each against its baseline in the same run:
#  - placement quality and query cost (paper figure 8): power of two choices vs uniform random / query-all;
#  - deployment of FW(1000|4000)->NAPT->LB (paper section 7): controller submit path vs synthesis alone.
#  - restart recovery of FW1000->NAPT->LB on an agent that lost it: ServerRecovery vs submitting it again;
#  - failover of FW1000->NAPT->LB around a failed offload switch: precomputed backup vs recomputing.
# Needs `mvn install` first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"
mvn -B -q -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath >/dev/null
[ -d target/test-classes ] || mvn -B -q -o test-compile
results=${BENCH_RESULTS:-$root/bench/results}
# BENCH_SMOKE=1 (make test): one round each, into BENCH_RESULTS (a scratch directory), to prove the bench runs.
smoke=(); [[ ${BENCH_SMOKE:-0} == 1 ]] && smoke=(-Dmetron.bench.smoke=true)
cp="target/test-classes:target/classes:$(cat target/bench.classpath)"
# Kryo needs the same --add-opens as the tests; the root pom's metron.addOpens is their one source
opens=$(grep -o '<metron.addOpens>[^<]*' "$root/pom.xml" | sed 's/<metron.addOpens>//')
nice java $opens "${smoke[@]}" -cp "$cp" org.metron.app.bench.PlacementBench "$results"
nice java $opens "${smoke[@]}" -Xss8m -cp "$cp" org.metron.app.bench.DeployBench "$results"
nice java $opens "${smoke[@]}" -Xss8m -cp "$cp" org.metron.app.bench.RecoveryBench "$results"
nice java $opens "${smoke[@]}" -Xss8m -cp "$cp" org.metron.app.bench.FailoverBench "$results"
