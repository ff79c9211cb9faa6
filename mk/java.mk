# Java reactor (pom.xml): synthesizer, drivers, controller-app, deploy/embedded.
# Unit tests (incl. tests against a real agent process, see drivers) run in java-test; root/netns end-to-end
# tests of the embedded host run from mk/e2e.mk. Each module may ship bench.sh writing bench/results/*.json.
# After them, scripts/architecture.py check: controller-app's package arrows against controller-app/package-layers.txt
# (from the classes the install just built), no Java file over 500 lines, docs/architecture.md's drawing current.
MVN ?= mvn -B -q -Dstyle.color=never
JAVA_MODULES := synthesizer drivers controller-app deploy/embedded
.PHONY: java-build java-test java-architecture java-bench java-bench-smoke java-clean
java-build:
	$(MVN) -DskipTests install
java-test:
	mvn -B -ntp -Dstyle.color=never -Dsurefire.printSummary=true install | grep -E --line-buffered 'Tests run:|FAIL|ERROR|BUILD|Reactor Summary|SUCCESS|metron-' ; exit $${PIPESTATUS[0]}
	@$(MAKE) --no-print-directory java-architecture
	@$(MAKE) --no-print-directory java-bench-smoke
java-architecture:
	@/usr/bin/python3 scripts/architecture.py check
# Each module's bench.sh once, one round (BENCH_SMOKE=1), into a scratch directory: part of java-test.
java-bench-smoke:
	@d=$$(mktemp -d /tmp/metron-bench-smoke.XXXXXX) && for m in $(JAVA_MODULES); do if [ -x $$m/bench.sh ]; then \
	  BENCH_SMOKE=1 BENCH_RESULTS=$$d $$m/bench.sh >>$$d/log 2>&1 || { tail -30 $$d/log; echo "java-bench-smoke: $$m FAILED"; exit 1; }; \
	  fi; done; echo "java-bench-smoke: $$(ls $$d/*.json | wc -l) results, every bench ran"; rm -rf $$d
java-bench:
	@for m in $(JAVA_MODULES); do if [ -x $$m/bench.sh ]; then echo "bench: $$m"; $$m/bench.sh || exit 1; fi; done
java-clean:
	$(MVN) clean
