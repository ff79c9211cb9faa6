elementclass Inner { input -> Counter -> output }
elementclass Outer { input -> i :: Inner -> Queue -> output }
FromDevice(in0) -> o :: Outer -> ToDevice(out0);