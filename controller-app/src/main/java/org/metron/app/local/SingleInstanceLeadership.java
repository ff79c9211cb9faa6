package org.metron.app.local;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;

/** Leadership when there is one controller instance: it acts for every chain. */
public final class SingleInstanceLeadership implements Leadership {
    @Override
    public boolean actsFor(ChainId chain) {
        return true;
    }

    @Override
    public void release(ChainId chain) {
    }
}
