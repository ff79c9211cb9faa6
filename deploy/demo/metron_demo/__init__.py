"""Single-machine Metron demo: a session (topology + embedded host), the FW->NAPT->LB chain, real traffic and
the checks that `make demo`, the end-to-end tests and the benchmarks share."""
