package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.PendingPart;
import org.metron.app.store.ChainStore;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** What of a chain does not run while its server is lost: the pending parts of a DEGRADED chain. */
final class LostServer {
    private LostServer() {
    }

    /** The chain's pipeline and NIC rules on {@code server}, as pending parts (its groups when none is recorded). */
    static List<PendingPart> notRunning(ChainStore store, ChainId id, DeviceId server) {
        String why = "server " + server + " unavailable";
        List<PendingPart> out = new ArrayList<>();
        store.installed().get(id).map(Versioned::value).filter(st -> st.server().equals(Optional.of(server)))
                .ifPresent(st -> {
                    if (st.pipeline()) {
                        out.add(new PendingPart(server, "pipeline " + id, why));
                    }
                    if (!st.nicRuleIds().isEmpty()) {
                        out.add(new PendingPart(server, "NIC rules " + st.nicRuleIds(), why));
                    }
                });
        if (out.isEmpty()) {
            out.add(new PendingPart(server, "the chain's groups", why));
        }
        return out;
    }
}
