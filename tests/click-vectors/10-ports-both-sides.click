// an element entered at input 1 and left from output 1 in one chain (a rewriter's reply path)
rw :: SynthRewriter(PATTERN 192.0.2.1 1024-65535 - -);
FromDevice(in1) -> [1] rw [1] -> ToDevice(out1);
rw[0] -> Discard;
