# C++ agent (agent/CMakeLists.txt). Release build with Ninja in agent/build; libFuzzer build (clang, ASan+UBSan,
# every library instrumented) in agent/build/fuzz. Benchmarks write bench/results/agent_*.json.
AGENT_DIR := $(ROOT)/agent
AGENT_BUILD := $(AGENT_DIR)/build
AGENT_FUZZ_BUILD := $(AGENT_DIR)/build/fuzz
AGENT_JOBS ?= 2
# Seconds per fuzzer: short in agent-test, long in agent-fuzz.
AGENT_FUZZ_SHORT ?= 20
AGENT_FUZZ_LONG ?= 600

.PHONY: agent-build agent-test agent-bench agent-bench-smoke agent-fuzz agent-fuzz-build agent-clean
agent-build:
	@cmake -S $(AGENT_DIR) -B $(AGENT_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@nice cmake --build $(AGENT_BUILD) -j $(AGENT_JOBS)

agent-test: agent-build agent-fuzz-build
	@cd $(AGENT_BUILD) && nice ctest --output-on-failure -j 1 $(if $(wildcard $(TEST_REPORTS)),--output-junit $(TEST_REPORTS)/agent.xml)
	@$(AGENT_DIR)/fuzz/run.sh $(AGENT_FUZZ_BUILD) $(AGENT_FUZZ_SHORT)
	@$(MAKE) --no-print-directory agent-bench-smoke

agent-bench: agent-build
	@mkdir -p $(ROOT)/bench/results
	@$(AGENT_DIR)/bench/run.sh $(AGENT_BUILD) $(ROOT)/bench/results

# Every agent bench, briefly (BENCH_SMOKE=1: 0.3 s rounds, one round, 64k instead of 1M flows) into a scratch
# directory: part of agent-test, so a bench that stops working fails the tests. Hugepages as in agent-bench.
agent-bench-smoke: agent-build
	@d=$$(mktemp -d /tmp/metron-bench-smoke.XXXXXX) && BENCH_SMOKE=1 $(AGENT_DIR)/bench/run.sh $(AGENT_BUILD) $$d >$$d/log 2>&1 \
	  && echo "agent-bench-smoke: $$(ls $$d/*.json | wc -l) results, every bench ran" && rm -rf $$d \
	  || { tail -30 $$d/log; echo "agent-bench-smoke: FAILED (log in $$d/log)"; exit 1; }

agent-fuzz-build:
	@cmake -S $(AGENT_DIR) -B $(AGENT_FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DMETRON_FUZZ=ON >/dev/null
	@nice cmake --build $(AGENT_FUZZ_BUILD) -j $(AGENT_JOBS) --target agent_fuzzers

agent-fuzz: agent-fuzz-build
	@$(AGENT_DIR)/fuzz/run.sh $(AGENT_FUZZ_BUILD) $(AGENT_FUZZ_LONG)

agent-clean:
	@rm -rf $(AGENT_BUILD) $(AGENT_FUZZ_BUILD)
