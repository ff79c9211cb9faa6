# Placeholder until the agent component lands: its targets say so and fail rather than pretend.
.PHONY: agent-build agent-test agent-bench agent-clean
agent-build: ; @echo "agent: not built yet"
agent-test: ; @echo "agent: no tests yet"; exit 1
agent-bench: ; @echo "agent: no benchmarks yet"
agent-clean: ; @true
.PHONY: agent-fuzz
agent-fuzz: ; @echo "agent: no fuzzers yet"; exit 1
