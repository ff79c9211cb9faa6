package org.metron.standin.net;

import com.google.common.collect.ImmutableSet;
import org.onlab.packet.IpAddress;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Host;
import org.onosproject.net.HostId;
import org.onosproject.net.host.HostEvent;
import org.onosproject.net.host.HostListener;
import org.onosproject.net.host.HostService;
import org.osgi.service.component.annotations.Component;

import java.util.Set;

/**
 * HostService (core-net's HostManager stand-in). No host provider runs here (ONOS's learns hosts from packets
 * its OpenFlow switches send up), so the host store is and stays empty; monitoring requests do nothing.
 */
@Component(immediate = true, service = HostService.class)
public class HostStandin extends AbstractListenerManager<HostEvent, HostListener> implements HostService {
    @Override
    public int getHostCount() {
        return 0;
    }

    @Override
    public Iterable<Host> getHosts() {
        return ImmutableSet.of();
    }

    @Override
    public Host getHost(HostId hostId) {
        return null;
    }

    @Override
    public Set<Host> getHostsByVlan(VlanId vlanId) {
        return ImmutableSet.of();
    }

    @Override
    public Set<Host> getHostsByMac(MacAddress mac) {
        return ImmutableSet.of();
    }

    @Override
    public Set<Host> getHostsByIp(IpAddress ip) {
        return ImmutableSet.of();
    }

    @Override
    public Set<Host> getConnectedHosts(ConnectPoint connectPoint) {
        return ImmutableSet.of();
    }

    @Override
    public Set<Host> getConnectedHosts(DeviceId deviceId) {
        return ImmutableSet.of();
    }

    @Override
    public void startMonitoringIp(IpAddress ip) {
    }

    @Override
    public void stopMonitoringIp(IpAddress ip) {
    }

    @Override
    public void requestMac(IpAddress ip) {
    }
}
