package org.metron.app.api;

import com.google.common.collect.ImmutableList;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/** What a drain or undrain of a server did ({@link DrainService}): the server's state and every move. */
public final class DrainReport {
    /** One chain or group moved from one server to another. */
    public static final class Move {
        private final ChainId chain;
        private final String what;
        private final DeviceId from;
        private final DeviceId to;
        private final String detail;

        /**
         * @param what   "chain" (the chain's own server changed), or the group moved ("group g0.1")
         * @param detail how: the chain's reason after the move, or the scaling history entry's detail
         */
        public Move(ChainId chain, String what, DeviceId from, DeviceId to, String detail) {
            this.chain = Objects.requireNonNull(chain);
            this.what = Objects.requireNonNull(what);
            this.from = Objects.requireNonNull(from);
            this.to = Objects.requireNonNull(to);
            this.detail = Objects.requireNonNull(detail);
        }

        public ChainId chain() {
            return chain;
        }

        public String what() {
            return what;
        }

        public DeviceId from() {
            return from;
        }

        public DeviceId to() {
            return to;
        }

        public String detail() {
            return detail;
        }

        @Override
        public boolean equals(Object o) {
            if (this == o) {
                return true;
            }
            if (!(o instanceof Move)) {
                return false;
            }
            Move m = (Move) o;
            return chain.equals(m.chain) && what.equals(m.what) && from.equals(m.from) && to.equals(m.to)
                    && detail.equals(m.detail);
        }

        @Override
        public int hashCode() {
            return Objects.hash(chain, what, from, to, detail);
        }

        @Override
        public String toString() {
            return chain + " " + what + ": " + from + " -> " + to;
        }
    }

    private final DeviceId server;
    private final boolean drained;
    private final List<Move> moves;

    public DrainReport(DeviceId server, boolean drained, List<Move> moves) {
        this.server = Objects.requireNonNull(server);
        this.drained = drained;
        this.moves = ImmutableList.copyOf(moves);
    }

    public DeviceId server() {
        return server;
    }

    /** Whether the server is drained now. */
    public boolean drained() {
        return drained;
    }

    public List<Move> moves() {
        return moves;
    }
}
