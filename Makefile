# Metron: one entry point for everything. Component rules live in mk/*.mk, each owned by one component:
#   mk/java.mk   Maven reactor (synthesizer, drivers, controller-app, deploy/embedded)
#   mk/agent.mk  C++ agent (CMake)
#   mk/e2e.mk    topologies, embedded host end-to-end tests, demo
#   mk/karaf.mk  the .oar files in a real Karaf with ONOS 2.7.0's bundles (tests/karaf)
# Every fragment defines <name>-build, <name>-test, <name>-bench (and may add <name>-fuzz).
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
export ROOT

COMPONENTS := java agent e2e karaf
# JUnit XML reports of the pytest and ctest suites, recapped at the end of `make test` (scripts/test_recap.py)
TEST_REPORTS := $(ROOT)/build/test-reports
# $(call junit,SUITE): pytest's option writing SUITE's report there (when run under `make test`)
junit = $(if $(wildcard $(TEST_REPORTS)),--junitxml=$(TEST_REPORTS)/$(1).xml -o junit_logging=system-out)
include $(foreach c,$(COMPONENTS),mk/$(c).mk)

.PHONY: help deps build test demo bench fuzz clean
help:
	@echo "make demo   - install, build and run FW->NAPT->LB end to end on an emulated network"
	@echo "make test   - install, build and run every test"
	@echo "make bench  - run the benchmarks, one JSON per figure in bench/results/"
	@echo "make fuzz   - run the fuzzers for longer"
	@echo "make deps | build | clean"

deps:
	@scripts/deps.sh

build: deps
	@$(MAKE) --no-print-directory $(foreach c,$(COMPONENTS),$(c)-build)

# Every suite runs (-k); what failed is printed again at the end, where CI's cut output still shows it.
test: build
	@rm -rf $(TEST_REPORTS) && mkdir -p $(TEST_REPORTS)
	@rc=0; $(MAKE) --no-print-directory -k $(foreach c,$(COMPONENTS),$(c)-test) || rc=$$?; \
	  /usr/bin/python3 scripts/test_recap.py $(TEST_REPORTS); exit $$rc

demo: build
	@$(MAKE) --no-print-directory e2e-demo

bench: build
	@mkdir -p bench/results
	@$(MAKE) --no-print-directory $(foreach c,$(COMPONENTS),$(c)-bench)
	@scripts/bench-summary.sh

fuzz: build
	@$(MAKE) --no-print-directory -k agent-fuzz e2e-fuzz

clean:
	@$(MAKE) --no-print-directory $(foreach c,$(COMPONENTS),$(c)-clean)
