FromDevice(in0) -> IPFilter(allow udp,
   deny all -> ToDevice(out0);