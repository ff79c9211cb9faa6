"""Metron emulated topologies: topology files (model), the launcher that builds and tears them down, and the
private OVS instance each one runs on."""
