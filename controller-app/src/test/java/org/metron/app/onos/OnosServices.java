package org.metron.app.onos;

import org.onosproject.mastership.MastershipService;
import org.onosproject.mastership.MastershipServiceAdapter;
import org.onosproject.net.DeviceId;

import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.StoreFactory;
import org.metron.app.store.ChainStoreService;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.onosproject.core.ApplicationId;
import org.onosproject.codec.impl.CodecManager;
import org.onosproject.core.CoreService;
import org.onosproject.core.CoreServiceAdapter;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.device.DeviceServiceAdapter;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.link.LinkServiceAdapter;

import java.util.ArrayList;
import java.util.List;

/**
 * The services Metron's ONOS components reference, wired as OSGi wires them: one instance of each service,
 * handed to every component that references it. ONOS's own adapters stand in for ONOS (none runs here); the
 * Metron SPI is the test network, switches and servers; {@link #chainStores} is the real {@link OnosChainStore},
 * activated.
 */
public final class OnosServices {
    public final TestNetwork network;
    public final TestSwitches switches;
    public final TestServers servers;
    public final Leadership leadership = new SingleInstanceLeadership();
    public final StoreFactory storeFactory = new LocalStoreFactory();
    public final List<DeviceListener> deviceListeners = new ArrayList<>();
    public final List<LinkListener> linkListeners = new ArrayList<>();
    /** One node, master of every device (the servers' agents are watched here). */
    public final MastershipService mastershipService = new MastershipServiceAdapter() {
        @Override
        public boolean isLocalMaster(DeviceId deviceId) {
            return true;
        }
    };
    public final CoreService coreService = new CoreServiceAdapter() {
        @Override
        public ApplicationId registerApplication(String name) {
            return new DefaultApplicationId(9, name);
        }
    };
    public final DeviceService deviceService = new DeviceServiceAdapter() {
        @Override
        public void addListener(DeviceListener l) {
            deviceListeners.add(l);
        }

        @Override
        public void removeListener(DeviceListener l) {
            deviceListeners.remove(l);
        }

        @Override
        public boolean isAvailable(DeviceId id) {
            return network.device(id).isPresent();
        }

        @Override
        public List<PortStatistics> getPortStatistics(DeviceId id) {
            return List.of(); // ONOS's DeviceManager answers no statistics with an empty list, the adapter null
        }
    };
    public final LinkService linkService = new LinkServiceAdapter() {
        @Override
        public void addListener(LinkListener l) {
            linkListeners.add(l);
        }

        @Override
        public void removeListener(LinkListener l) {
            linkListeners.remove(l);
        }
    };
    public final ChainStoreService chainStores;
    /** ONOS's own codec service (onos-core-common), with ONOS's codecs registered as ONOS starts it. */
    public final CodecManager codecs = new CodecManager();

    public OnosServices(TestNetwork network, TestSwitches switches, TestServers servers) {
        this.network = network;
        this.switches = switches;
        this.servers = servers;
        OnosChainStore s = new OnosChainStore();
        s.storeFactory = storeFactory;
        s.switchProgrammer = switches;
        s.activate();
        this.chainStores = s;
        codecs.activate();
    }

    /** A {@link MetronComponent} referencing these services, activated. */
    public MetronComponent activateMetron() {
        MetronComponent c = new MetronComponent();
        c.coreService = coreService;
        c.codecService = codecs;
        c.network = network;
        c.switches = switches;
        c.servers = servers;
        c.leadership = leadership;
        c.chainStores = chainStores;
        c.deviceService = deviceService;
        c.linkService = linkService;
        c.mastershipService = mastershipService;
        c.activate();
        return c;
    }

    /** Deactivates a component made by {@link #activateMetron()} (its deactivate is not visible elsewhere). */
    public static void deactivate(MetronComponent c) throws InterruptedException {
        c.deactivate();
    }
}
