package org.metron.app.impl;

import org.metron.app.store.FailoverBackup;
import org.onosproject.net.Link;

import java.util.Objects;

/**
 * A chain's precomputed answer to one switch-to-switch link failing (either direction): the {@link FailoverBackup}
 * planned over the network without that link, its {@code failed()} device being the link's far end as the chain's
 * traffic crosses it. The controller applies it after hearing of the failure ({@link ChainReroute#rerouteLink}),
 * and {@link FailoverGroupPlanner} arms it in the switches beforehand as fast-failover groups. Not stored: computed
 * again with the other backups after every change of the chain.
 */
final class LinkBackup {
    private final Link link;
    private final FailoverBackup backup;

    LinkBackup(Link link, FailoverBackup backup) {
        this.link = Objects.requireNonNull(link);
        this.backup = Objects.requireNonNull(backup);
    }

    Link link() {
        return link;
    }

    FailoverBackup backup() {
        return backup;
    }

    /** Whether this answers the failure of the link with an end at {@code src} or {@code dst}. */
    boolean covers(Link failed) {
        return link.src().equals(failed.src()) && link.dst().equals(failed.dst())
                || link.src().equals(failed.dst()) && link.dst().equals(failed.src());
    }

    @Override
    public String toString() {
        return "backup for link " + link.src() + "-" + link.dst();
    }
}
