rw :: IPRewriter(pattern 10.0.0.1 1024-65535 - - 0 1, drop);
FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw -> Unstrip(14) -> ToDevice(out0);
FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1] rw [1] -> Unstrip(14) -> ToDevice(out1);
c :: Classifier(12/0800, // IPv4
                12/86dd, /* IPv6 */ -);
FromDevice(in2) -> c; c[0] -> Discard; c[1] -> Discard; c[2] -> Discard;