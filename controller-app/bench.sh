#!/usr/bin/env bash
# Controller benchmarks (run by `make bench` through mk/java.mk): placement quality and query cost (paper
# figure 8), power of two choices vs uniform random / query-all, in the same run. Needs `mvn install` first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"
mvn -B -q -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath >/dev/null
[ -d target/test-classes ] || mvn -B -q -o test-compile
exec nice java -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" \
    org.metron.app.bench.PlacementBench "$root/bench/results"
