package org.metron.embedded.contract;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.Rule;
import org.junit.rules.TemporaryFolder;
import org.metron.app.spi.ServerRegistry;
import org.metron.drivers.server.MetronDeviceIds;
import org.metron.embedded.net.AgentServerRegistry;
import org.metron.embedded.net.NetworkFile;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The embedded host's implementation, {@link AgentServerRegistry}, over a topology state file declaring the server
 * as {@code topologies/topo up} writes one (its device id, agent address and NICs with their cabling).
 */
public class EmbeddedServerRegistryContractTest extends ServerRegistryContract {
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();
    private AgentServerRegistry registry;

    @Override
    protected ServerRegistry registry(DeviceId id, Map<String, ConnectPoint> nics) throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObjectNode net = json.createObjectNode();
        net.putArray("switches").addObject().put("name", "s1").put("device_id", "of:0000000000000001");
        ObjectNode server = net.putArray("servers").addObject().put("name", "srv1").put("device_id", id.toString())
                .put("agent", MetronDeviceIds.endpoint(id).target());
        ArrayNode cabled = server.putArray("nics");
        nics.forEach((nic, at) -> cabled.addObject().put("name", nic).put("port", 1).put("attachment", at.toString()));
        for (String empty : new String[]{"hosts", "links", "ingress", "egress"}) {
            net.putArray(empty);
        }
        Path state = tmp.getRoot().toPath().resolve("state.json");
        Files.writeString(state, json.writeValueAsString(json.createObjectNode().set("network", net)));
        registry = new AgentServerRegistry(NetworkFile.read(state), Optional.empty());
        return registry;
    }

    @Override
    protected boolean listsAServerWhoseAgentIsDown() {
        return true;
    }

    @Override
    protected void stop() {
        if (registry != null) {
            registry.close();
        }
    }
}
