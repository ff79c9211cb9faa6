package org.metron.app.scaling;

import org.metron.agent.v1.ClassStats;
import org.metron.agent.v1.CoreStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.onosproject.net.DeviceId;

import java.util.Map;

/**
 * Load reports as an agent streams them (cumulative counters, 100 ms apart), made by hand so that a test sets
 * each group's load and decides which server reports when (the monitor's tests feed them to onReport).
 */
final class LoadReports {
    private static final long CYCLES_PER_INTERVAL = 100_000_000L;

    private LoadReports() {
    }

    /**
     * The report of {@code server} after {@code step} intervals: the cores and groups of placement {@code p} on it,
     * each group {@code load} busy in the last interval ({@code acc} holds each group's busy cycles so far).
     *
     * @param ratePerClass  packets per interval, per class
     * @param sportPerClass per class, per interval: its TCP/UDP packets, then per source-port bit how many had it
     *                      set (ClassStats.l4_packets, sport_ones)
     */
    static Stats report(Placement p, DeviceId server, long step, double load, Map<Integer, Long> ratePerClass,
                        Map<String, long[]> acc, Map<Integer, long[]> sportPerClass) {
        Stats.Builder s = Stats.newBuilder().setTimestampNs(step * 100_000_000L);
        for (int core : p.coresOn(server)) {
            s.addCores(CoreStats.newBuilder().setCore(core).setTotalCycles(step * CYCLES_PER_INTERVAL));
        }
        for (GroupAssignment g : p.groups()) {
            if (!g.server().orElse(p.server().get()).equals(server)) {
                continue;
            }
            long[] a = acc.computeIfAbsent(g.groupId(), k -> new long[1]);
            a[0] += (long) (load * CYCLES_PER_INTERVAL);
            GroupStats.Builder gs = GroupStats.newBuilder().setPipelineId(p.chainId().name())
                    .setGroupId(g.groupId()).setCore(g.core()).setBusyCycles(a[0]);
            for (int c : g.classIds()) {
                ClassStats.Builder cs = ClassStats.newBuilder().setClassId(c).setPackets(step * ratePerClass.get(c));
                long[] bits = sportPerClass.get(c);
                if (bits != null) {
                    cs.setL4Packets(step * bits[0]);
                    for (int k = 0; k < 16; k++) {
                        cs.addSportOnes(step * bits[1 + k]);
                    }
                }
                gs.addClasses(cs);
            }
            s.addGroups(gs);
        }
        return s.build();
    }

    /** The report of the chain's own server. */
    static Stats report(Placement p, long step, double load, Map<Integer, Long> ratePerClass,
                        Map<String, long[]> acc, Map<Integer, long[]> sportPerClass) {
        return report(p, p.server().get(), step, load, ratePerClass, acc, sportPerClass);
    }
}
