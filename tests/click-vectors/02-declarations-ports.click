// a classifier with two outputs
src :: FromDevice(eth0);
c :: IPClassifier(tcp dst port 80,
                  -);
src -> c;
c [0] -> Counter -> [0] sink :: ToDevice(eth1);
c[1]->Discard;
