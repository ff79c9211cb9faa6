a, b :: Counter;
FromDevice(in0) -> a -> ToDevice(out0);
FromDevice(in1) -> b -> ToDevice(out1);