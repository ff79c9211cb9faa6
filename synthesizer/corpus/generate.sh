#!/usr/bin/env bash
# Regenerates the synthesizer corpus (seeded, deterministic) from CorpusGenerator. CorpusEquivalenceTest fails
# when the committed files differ from what the generator writes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d target/classes ] || mvn -B -q -o -DskipTests install
java -cp target/classes org.metron.synth.corpus.CorpusGenerator corpus
