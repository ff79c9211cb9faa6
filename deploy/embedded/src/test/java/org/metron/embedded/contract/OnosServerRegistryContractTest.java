package org.metron.embedded.contract;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.onos.OnosServerRegistry;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.provider.MetronServerConfig;
import org.metron.drivers.provider.MetronServerProvider;
import org.metron.drivers.server.DefaultAgentClientService;
import org.metron.drivers.server.MetronDriversLoader;
import org.metron.standin.net.DeviceManagerStandin;
import org.metron.standin.net.DriverManagerStandin;
import org.metron.standin.net.LinkManagerStandin;
import org.onlab.osgi.ServiceDirectory;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.driver.DefaultDriverHandler;

import java.util.Map;

import static org.metron.embedded.contract.StandinNode.set;

/**
 * ONOS's implementation, {@link OnosServerRegistry}, over ONOS's DeviceService, LinkService, DriverService and
 * NetworkConfigService on one node (tests/karaf/onos-standin's, {@link StandinNode}), with the drivers bundle as
 * ONOS runs it: {@link MetronDriversLoader} registers the metron-server driver, {@link MetronServerProvider} makes
 * the server's device (and its links) from its {@code metron} netcfg entry while its agent answers, and the
 * driver's behaviours reach the agent through {@link DefaultAgentClientService}, which in ONOS they get from the
 * OSGi service registry ({@link DefaultDriverHandler}'s service directory, pointed here at that one service).
 */
public class OnosServerRegistryContractTest extends ServerRegistryContract {
    private static final DeviceId SWITCH = DeviceId.deviceId("of:0000000000000001");
    private StandinNode node;
    private ServiceDirectory osgi;

    @Override
    protected ServerRegistry registry(DeviceId id, Map<String, ConnectPoint> nics) throws Exception {
        node = new StandinNode();
        DeviceManagerStandin devices = node.devices();
        LinkManagerStandin links = node.links();
        DriverManagerStandin drivers = node.drivers();
        MetronDriversLoader loader = new MetronDriversLoader();
        set(loader, "driverAdminService", drivers);
        node.start(loader);
        DefaultAgentClientService agents = node.start(new DefaultAgentClientService());
        osgi = StandinNode.driverServices(agents);
        MetronServerProvider provider = new MetronServerProvider();
        set(provider, "deviceProviderRegistry", devices);
        set(provider, "linkProviderRegistry", links);
        set(provider, "netcfg", node.netcfg());
        set(provider, "driverService", drivers);
        set(provider, "agents", agents);
        set(provider, "mastership", node.mastership());
        node.start(provider);
        node.connect(SWITCH); // the switch the NICs are cabled to: ONOS keeps no link to a device it does not know

        ObjectNode cfg = new ObjectMapper().createObjectNode();
        ObjectNode cabled = cfg.putObject("nics");
        nics.forEach((nic, at) -> cabled.put(nic, at.toString()));
        node.netcfg().applyConfig(id, MetronServerConfig.class, cfg);

        OnosServerRegistry registry = new OnosServerRegistry();
        set(registry, "deviceService", devices);
        set(registry, "linkService", links);
        set(registry, "driverService", drivers);
        set(registry, "netcfgService", node.netcfg());
        set(registry, "configErrors", provider);
        return registry;
    }

    @Override
    protected boolean listsAServerWhoseAgentIsDown() {
        return false;
    }

    @Override
    protected void stop() throws Exception {
        if (node != null) {
            node.stop();
        }
        if (osgi != null) {
            StandinNode.serviceDirectory(osgi);
        }
    }
}
