require(package "metron");
FromDevice(in0) -> ToDevice(out0);;