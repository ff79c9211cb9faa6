package org.metron.embedded.contract;

import org.metron.app.onos.OnosNetworkView;
import org.metron.app.spi.NetworkView;
import org.metron.standin.net.DeviceManagerStandin;
import org.metron.standin.net.HostStandin;
import org.metron.standin.net.LinkManagerStandin;
import org.metron.standin.net.PipeconfStandin;
import org.metron.standin.net.TopologyStandin;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.Link;
import org.onosproject.net.link.DefaultLinkDescription;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderService;
import org.onosproject.net.provider.ProviderId;


import static org.metron.embedded.contract.StandinNode.set;

/**
 * ONOS's implementation, {@link OnosNetworkView}, over ONOS's DeviceService, LinkService, PathService, HostService
 * and PiPipeconfService on one node (tests/karaf/onos-standin's, {@link StandinNode}), with paper-fig5's devices
 * and links reported by providers as ONOS's OpenFlow and Metron's server providers report them.
 */
public class OnosNetworkViewContractTest extends NetworkViewContract {
    private StandinNode node;

    @Override
    protected NetworkView view() {
        node = new StandinNode();
        DeviceManagerStandin devices = node.devices();
        LinkManagerStandin links = node.links();
        TopologyStandin topology = new TopologyStandin();
        set(topology, "dispatcher", node.events);
        set(topology, "deviceService", devices);
        set(topology, "linkService", links);
        node.start(topology);
        PipeconfStandin pipeconfs = new PipeconfStandin();
        set(pipeconfs, "dispatcher", node.events);
        node.start(pipeconfs);
        OnosNetworkView view = new OnosNetworkView();
        set(view, "deviceService", devices);
        set(view, "pathService", topology);
        set(view, "pipeconfService", pipeconfs);
        set(view, "hostService", new HostStandin());
        set(view, "linkService", links);
        node.start(view);

        node.connect(S1, S2, S3, SRV1);
        LinkProviderService seen = links.register(new Discovery());
        for (String[] l : new String[][]{{"of:0000000000000001/2", "of:0000000000000003/2"},
                {"of:0000000000000001/3", "of:0000000000000002/1"}, {"of:0000000000000002/2", "of:0000000000000003/3"},
                {"of:0000000000000003/4", "metron:srv1/1"}}) {
            ConnectPoint a = ConnectPoint.deviceConnectPoint(l[0]);
            ConnectPoint b = ConnectPoint.deviceConnectPoint(l[1]);
            seen.linkDetected(new DefaultLinkDescription(a, b, Link.Type.DIRECT));
            seen.linkDetected(new DefaultLinkDescription(b, a, Link.Type.DIRECT));
        }
        // the topology is rebuilt on the link events, on the dispatcher's thread
        long end = System.currentTimeMillis() + 5_000;
        while (view.path(ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                ConnectPoint.deviceConnectPoint("metron:srv1/1")).isEmpty() && System.currentTimeMillis() < end) {
            sleep();
        }
        return view;
    }

    private static void sleep() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    protected void stop() {
        node.stop();
    }

    /** Link discovery (ONOS's LLDP provider's role). */
    private static final class Discovery implements LinkProvider {
        @Override
        public ProviderId id() {
            return StandinNode.PROVIDER;
        }
    }
}
