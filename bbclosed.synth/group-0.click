// classes 1: BlackBox(ids: NAME ids, PROGRAM /work/wt-bb-synth/agent/build/metron-nf-fwd, ARGS "--drop-port 5001", MODE RING, ON_FAILURE CLOSED, RING_SIZE 1024, ATTACH_TIMEOUT 2000)
bb_ids_a63adf3b_p1 :: Counter -> rw_bb_ids_a63adf3b_1 :: SynthRewriter(PATTERN 192.0.2.1 1024-65535 10.0.2.1 8080, PATTERN 192.0.2.1 1024-65535 10.0.2.2 8080, PATTERN 192.0.2.1 1024-65535 10.0.2.3 8080, SELECT roundrobin, TCP_TIMEOUT 86400, TCP_NODATA_TIMEOUT 300, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 300, UDP_STREAMING_TIMEOUT 300) -> Unstrip(14) -> [0]output;
bb_ids_a63adf3b :: BlackBoxNF(NAME ids, PROGRAM /work/wt-bb-synth/agent/build/metron-nf-fwd, ARGS "--drop-port 5001", MODE RING, ON_FAILURE CLOSED, RING_SIZE 1024, ATTACH_TIMEOUT 2000);
bb_ids_a63adf3b -> Strip(14) -> CheckIPHeader -> bb_ids_a63adf3b_c :: IPClassifier(
    ip vers 4 and (ip proto 6 or ip proto 17) and not ip firstfrag,
    ip vers 4 and (ip proto 6 or ip proto 17) and ip firstfrag,
    ip vers 4 and (ip proto 6 or ip proto 17) and ip firstfrag,
    (ip vers 4 or ip vers 6));
bb_ids_a63adf3b_c[0] -> Discard;
bb_ids_a63adf3b_c[1] -> bb_ids_a63adf3b_p1;
bb_ids_a63adf3b_c[2] -> Discard;
bb_ids_a63adf3b_c[3] -> Discard;
input -> Strip(14) -> CheckIPHeader -> guard :: IPFilter(
    0 (ip vers 4 or ip vers 6) and ip proto 17 and ip firstfrag and dst port 5000,
    0 (ip vers 4 or ip vers 6) and ip proto 17 and ip firstfrag and dst port 5001,
    deny (ip vers 4 or ip vers 6));
guard[0] -> guard_ok :: Counter;
guard_ok -> Unstrip(14) -> bb_ids_a63adf3b;
