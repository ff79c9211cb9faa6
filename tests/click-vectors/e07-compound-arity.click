elementclass E { $a | input -> output }
FromDevice(in0) -> E(1, 2) -> ToDevice(out0);