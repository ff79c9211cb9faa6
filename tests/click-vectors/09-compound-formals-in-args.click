elementclass Filter { $net |
  input -> IPFilter(allow src net $net, deny all) -> output;
}
FromDevice(in0) -> f :: Filter(10.0.0.0/8) -> ToDevice(out0);