FromDevice(in0) -> ToDevice(out0)
Counter -> Discard;