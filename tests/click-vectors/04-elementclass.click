elementclass Cnt { $dev |
  input -> c :: Counter -> output;
  input [1] -> Discard;
}
FromDevice(in0) -> x :: Cnt(eth7) -> ToDevice(out0);
/* block comment
   spanning lines */
FromDevice(in1) -> [1] x;