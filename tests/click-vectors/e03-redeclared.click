a :: Counter;
a :: Discard;