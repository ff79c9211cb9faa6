define($DEV eth0, $PORT 8080);
FromDevice($DEV) -> IPFilter(allow tcp dst port $PORT, deny all) -> ToDevice(out0)