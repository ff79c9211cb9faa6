package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.DrainReport;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** What a drain or undrain did (docs/failover.md#planned-restart-drain): the server, its state, each move. */
public final class DrainReportCodec extends JsonCodec<DrainReport> {
    @Override
    public ObjectNode encode(DrainReport r, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("server", r.server().toString());
        n.put("drained", r.drained());
        ArrayNode moves = n.putArray("moves");
        for (DrainReport.Move m : r.moves()) {
            moves.addObject().put("chain", m.chain().name()).put("what", m.what()).put("from", m.from().toString())
                    .put("to", m.to().toString()).put("detail", m.detail());
        }
        return n;
    }
}
