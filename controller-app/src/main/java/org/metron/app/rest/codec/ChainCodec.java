package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Chain;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

import java.util.Locale;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * A chain's summary: name, state and why, what is pending on which device, version, an update in progress or
 * refused, tag type, cores and its deployment points. GET /chains/{name} adds the definition beside it.
 */
public final class ChainCodec extends JsonCodec<Chain> {
    @Override
    public ObjectNode encode(Chain c, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("name", c.id().name());
        n.put("state", c.state().name());
        n.put("reason", c.reason());
        ArrayNode pending = n.putArray("pending");
        c.pending().forEach(p -> pending.addObject().put("device", p.device().toString()).put("what", p.what())
                .put("why", p.why()));
        n.put("version", c.version());
        c.update().ifPresent(u -> {
            ObjectNode un = n.putObject("update");
            un.put("state", u.pending() ? "PENDING" : "REFUSED");
            u.refusal().ifPresent(f -> un.put("error", f.name()).put("message", u.message()));
        });
        n.put("tagType", c.deployment().tagType().name().toLowerCase(Locale.ROOT));
        n.put("cpuCores", c.deployment().cpuCores());
        n.put("ingressPoint", ingress(c.deployment()).toString());
        n.put("egressPoint", egress(c.deployment()).toString());
        return n;
    }
}
