package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.drivers.provider.ServerConfigErrors;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** A server netcfg entry ONOS refused: device, the field under {@code metron}, the reason, when (ISO-8601). */
public final class RefusedConfigCodec extends JsonCodec<ServerConfigErrors.Refused> {
    @Override
    public ObjectNode encode(ServerConfigErrors.Refused r, CodecContext context) {
        return context.mapper().createObjectNode().put("device", r.device().toString()).put("field", r.field())
                .put("reason", r.reason()).put("time", r.time().toString());
    }
}
