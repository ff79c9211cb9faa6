package org.metron.embedded.contract;

import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.Leadership;

/** The embedded host's implementation: its one instance, {@link SingleInstanceLeadership}. */
public class EmbeddedLeadershipContractTest extends LeadershipContract {
    @Override
    protected Leadership leadership() {
        return new SingleInstanceLeadership();
    }
}
