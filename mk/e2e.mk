# End-to-end component: emulated topologies (topologies/), the embedded host's end-to-end tests (tests/e2e/),
# the demo (deploy/demo/). The embedded host itself is a Maven module built by mk/java.mk.
PYTEST ?= /usr/bin/python3 -m pytest
.PHONY: e2e-build e2e-test e2e-bench e2e-bench-smoke e2e-fuzz e2e-clean e2e-demo check-long fastnet-bench fastmoves-bench fastcut-bench
# metron-fastgen, the fast network's DPDK generator and sink (topologies/fastgen): its own small CMake project.
FASTGEN_BUILD := topologies/fastgen/build
e2e-build:
	@/usr/bin/python3 -m compileall -q topologies/metron_topo tests/e2e deploy/demo deploy/embedded/metron_client.py bench/fastnet bench/failover >/dev/null
	@cd topologies && ./topo list >/dev/null
	@cmake -S topologies/fastgen -B $(FASTGEN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@nice cmake --build $(FASTGEN_BUILD) >/dev/null
# e2e-test runs the REST API's fuzz (tests/e2e/test_openapi_e2e.py) with 300 cases (e2e-fuzz: FUZZ_CASES) and prints
# the 20 slowest tests, so a CI log shows where the suite's time goes
e2e-test: e2e-build
	$(PYTEST) -q -p no:cacheprovider --durations=20 $(call junit,e2e) tests/e2e
	@$(MAKE) --no-print-directory e2e-bench-smoke
FUZZ_CASES ?= 5000
e2e-fuzz: e2e-build
	METRON_FUZZ_CASES=$(FUZZ_CASES) $(PYTEST) -q -p no:cacheprovider tests/e2e/test_openapi_e2e.py
# The real-data-plane checker (tests/e2e/test_real_equivalence.py, part of e2e-test with 1320 frames per corpus
# chain) with 10^6 frames per corpus chain, in windows of a third of the chain's shortest idle timeout (flow state
# checked per window; a reply pass answers the last window, see synthesizer/README.md); each chain's line gives
# its counts and the time it took. Root, after `make build`. METRON_REAL_FRAMES / METRON_REAL_PPS /
# METRON_REAL_RESULTS (keep captures and reports) override.
REAL_FRAMES ?= 1000000
check-long: e2e-build
	METRON_REAL_FRAMES=$(REAL_FRAMES) $(PYTEST) -q -s -p no:cacheprovider tests/e2e/test_real_equivalence.py
EMBEDDED_JAR := deploy/embedded/target/metron-embedded.jar
e2e-bench:
	@test -f $(EMBEDDED_JAR) || { echo "e2e-bench: $(EMBEDDED_JAR) missing: run make build"; exit 1; }
	nice java -cp $(EMBEDDED_JAR) org.metron.embedded.bench.RuleInstallBench bench/results 1000 4000
	deploy/demo/bench.py --out bench/results
	nice /usr/bin/python3 bench/scaling/scaling_bench.py bench/results
	nice /usr/bin/python3 bench/scaling/atload_bench.py bench/results
	nice /usr/bin/python3 bench/scaling/scaleout_bench.py bench/results
	nice /usr/bin/python3 bench/failover/linkcut_bench.py bench/results
	@$(MAKE) --no-print-directory fastnet-bench
	@$(MAKE) --no-print-directory fastmoves-bench
	@$(MAKE) --no-print-directory fastcut-bench
# The fast network's steady-state lossless rate against the kernel-veth network's, same run (root, hugepages,
# openvswitch-switch-dpdk): bench/results/fastnet_lossless_pps.json and fastnet_lossless_pps_vs_target.json.
fastnet-bench: e2e-build
	@test -f $(EMBEDDED_JAR) || { echo "fastnet-bench: $(EMBEDDED_JAR) missing: run make build"; exit 1; }
	@mkdir -p bench/results
	/usr/bin/python3 bench/fastnet/fastnet_bench.py bench/results
# Update, refused update, agent restart, scale-out and back at 265 kpps on the fast network, each also with no
# traffic (bench/fastnet/moves_bench.py): bench/results/fastmoves_<op>_lost.json and fastmoves_<op>_ms.json.
fastmoves-bench: e2e-build
	@test -f $(EMBEDDED_JAR) || { echo "fastmoves-bench: $(EMBEDDED_JAR) missing: run make build"; exit 1; }
	@mkdir -p bench/results
	/usr/bin/python3 bench/fastnet/moves_bench.py bench/results
# A link cut at the fast path's rate (~250 kpps), fast-failover group against the controller-applied backup, 2
# rounds alternating (bench/failover/fastcut_bench.py, ~6 min): bench/results/failover_fastpath_*.json.
fastcut-bench: e2e-build
	@test -f $(EMBEDDED_JAR) || { echo "fastcut-bench: $(EMBEDDED_JAR) missing: run make build"; exit 1; }
	@mkdir -p bench/results
	/usr/bin/python3 bench/failover/fastcut_bench.py bench/results
# The e2e benches once, small (one round, 100-rule chains) into a scratch directory: part of e2e-test, so a bench
# that stops working fails the tests. The scaling benches (bench/scaling, minutes per trial) run in their own
# e2e tests' scenarios (tests/e2e -k scal); E2E_BENCH_SMOKE_SCALING=1 adds them here with one trial each.
e2e-bench-smoke:
	@test -f $(EMBEDDED_JAR) || { echo "e2e-bench-smoke: $(EMBEDDED_JAR) missing: run make build"; exit 1; }
	@d=$$(mktemp -d /tmp/metron-bench-smoke.XXXXXX) && ( set -e; \
	  nice java -Dmetron.bench.smoke=true -cp $(EMBEDDED_JAR) org.metron.embedded.bench.RuleInstallBench $$d 100; \
	  deploy/demo/bench.py --out $$d --rules 100 --rounds 1 --chains 2; \
	  if [ "$${E2E_BENCH_SMOKE_SCALING:-0}" = 1 ]; then \
	    SCALING_BENCH_TRIALS=1 nice /usr/bin/python3 bench/scaling/scaling_bench.py $$d; \
	    nice /usr/bin/python3 bench/scaling/atload_bench.py $$d 10000,25000; \
	    SCALEOUT_BENCH_TRIALS=1 nice /usr/bin/python3 bench/scaling/scaleout_bench.py $$d; fi ) >$$d/log 2>&1 \
	  && echo "e2e-bench-smoke: $$(ls $$d/*.json | wc -l) results, every bench ran" && rm -rf $$d \
	  || { tail -30 $$d/log; echo "e2e-bench-smoke: FAILED (log in $$d/log)"; exit 1; }
e2e-clean: ; @true
e2e-demo:
	deploy/demo/demo.py
