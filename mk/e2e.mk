# Placeholder until the e2e component lands: its targets say so and fail rather than pretend.
.PHONY: e2e-build e2e-test e2e-bench e2e-clean
e2e-build: ; @echo "e2e: not built yet"
e2e-test: ; @echo "e2e: no tests yet"; exit 1
e2e-bench: ; @echo "e2e: no benchmarks yet"
e2e-clean: ; @true
.PHONY: e2e-demo
e2e-demo: ; @echo "demo: not implemented yet"; exit 1
