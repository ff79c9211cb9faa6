#!/usr/bin/env bash
# Regenerates the synthesizer corpus (seeded, deterministic) from CorpusGenerator. CorpusEquivalenceTest fails
# when the committed files differ from what the generator writes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d target/lib ] || (cd .. && mvn -B -q -o -pl synthesizer -DskipTests package)
java -cp "target/classes:target/lib/*" org.metron.synth.corpus.CorpusGenerator corpus
