package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.agent.v1.BlackBoxStats;
import org.metron.app.scaling.BlackBoxStatus;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** A black-box NF's status as its agent last reported it (docs/blackbox.md; the API document's BlackBox). */
public final class BlackBoxCodec extends JsonCodec<BlackBoxStatus> {
    @Override
    public ObjectNode encode(BlackBoxStatus b, CodecContext context) {
        BlackBoxStats s = b.stats();
        return context.mapper().createObjectNode().put("nf", s.getNf()).put("group", b.group())
                .put("server", b.server().toString()).put("element", s.getElement()).put("mode", s.getMode())
                .put("state", s.getState()).put("onFailure", s.getOnFailure()).put("pid", s.getPid())
                .put("restarts", s.getRestarts()).put("sent", s.getSent()).put("returned", s.getReturned())
                .put("nfDropped", s.getNfDropped()).put("ringFull", s.getRingFull()).put("bypassed", s.getBypassed())
                .put("failedClosed", s.getFailedClosed()).put("nfLost", s.getNfLost()).put("nfSleeps", s.getNfSleeps())
                .put("nfWakeups", s.getNfWakeups()).put("link", s.getLink()).put("lastExit", s.getLastExit());
    }
}
