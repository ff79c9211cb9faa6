input -> c :: Classifier(12/0800, -) -> Counter -> [0]output; c[1] -> Discard;
x :: LookupIPRoute(10.0.0.0/8 0) ;