package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.ServerInfo;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

import java.time.Instant;

/** A Metron server as its agent reports it now: reachability, drain, load, each core and each NIC's dispatch. */
public final class ServerCodec extends JsonCodec<ServerInfo> {
    @Override
    public ObjectNode encode(ServerInfo s, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("id", s.id().toString());
        n.put("agent", s.agent());
        n.put("reachable", s.reachable());
        n.put("drained", s.drainedSinceMs().isPresent());
        s.drainedSinceMs().ifPresent(t -> n.put("drainedSince", Instant.ofEpochMilli(t).toString()));
        if (!s.reachable()) {
            n.put("error", s.error());
        }
        n.put("load", s.load());
        n.put("freeCores", s.freeCores());
        ArrayNode cores = n.putArray("cores");
        for (ServerInfo.CoreInfo c : s.cores()) {
            cores.addObject().put("id", c.id()).put("load", c.load()).put("available", c.available())
                    .put("chain", c.pipeline());
        }
        ArrayNode nics = n.putArray("nics");
        for (ServerInfo.NicInfo nic : s.nics()) {
            nics.addObject().put("name", nic.name()).put("mac", nic.mac()).put("linkUp", nic.linkUp())
                    .put("maxNicRules", nic.maxNicRules())
                    .set("dispatch", context.encode(nic.dispatch(), NicDispatch.class));
        }
        return n;
    }
}
