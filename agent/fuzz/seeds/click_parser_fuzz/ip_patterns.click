input -> Strip(14) -> CheckIPHeader -> sw :: IPClassifier(
    icmp type < 4 or icmp type echo,
    ip vers 6 and icmp type 128 and src net 2001:db8:4::/48,
    tcp opt syn and not tcp opt ack and not (tcp opt fin || tcp opt rst),
    ip mf and not ip firstfrag,
    dst port 22 or 443 or >= 60000,
    src host 10.1.2.3 or 10.1.2.4 or 2001:db8::5,
    src and dst net 10.0.0.0/8 && ip ttl != 1,
    ip dscp 46 or ip dscp 61-63,
    ip frag and ip proto 6, ip unfrag and udp src port bgp, ip hlim 1-2,
    icmp and ip tos 0x10-0x1f, ! (ip proto > 50 and ip proto <= 60), -);
sw[0] -> [0]output; sw[1] -> [0]output; sw[2] -> [0]output; sw[3] -> [0]output; sw[4] -> [0]output;
sw[5] -> [0]output; sw[6] -> [0]output; sw[7] -> [0]output; sw[8] -> [1]output; sw[9] -> [1]output;
sw[10] -> [1]output; sw[11] -> [1]output; sw[12] -> [1]output; sw[13] -> Discard;
