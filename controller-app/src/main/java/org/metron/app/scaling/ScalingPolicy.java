package org.metron.app.scaling;

import org.metron.app.api.ChainId;

import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Decides when a chain's groups split or merge (docs/scaling.md#policy). No I/O: it sees one {@link ChainLoad}
 * per load report and the time, keeps an EWMA and how long each group has been over/under per group and a
 * cooldown per core,
 * and answers at most one decision per chain and interval. Thread-safe; one instance serves every chain.
 */
public final class ScalingPolicy {

    /** Thresholds; see docs/scaling.md#policy for why these values. Immutable. */
    public static final class Params {
        /**
         * Metron's policy: a group splits on the first report at or above 0.8 (reports every 50 ms); the way back
         * has the hysteresis: groups merge after 2 s at or below 0.3, into at most 0.6.
         */
        public static final Params DEFAULT = new Params(0.80, 0.30, 0.60, 0.5, 1, false, 2000, 1000);
        /**
         * The original Metron's policy, as a baseline for benchmarks (docs/scaling.md#policy): up when the EWMA
         * reaches 0.75, down at 0.25, scale-in after 3 s, 1 s per-core cooldown; run it with a 500 ms monitoring
         * interval (the paper's loop).
         */
        public static final Params ORIGINAL = new Params(0.75, 0.25, 0.50, 0.5, 1, true, 3000, 1000);

        /**
         * Parameters by name: "metron" ({@link #DEFAULT}) or "original" ({@link #ORIGINAL}).
         *
         * @throws IllegalArgumentException naming the unknown name and the known ones
         */
        public static Params named(String name) {
            switch (name) {
                case "metron":
                    return DEFAULT;
                case "original":
                    return ORIGINAL;
                default:
                    throw new IllegalArgumentException("unknown scaling policy '" + name
                            + "' (known: metron, original)");
            }
        }

        final double overload;
        final double underload;
        final double mergeCeiling;
        final double alpha;
        final int sustainUp;
        final boolean smoothedUp;
        final long scaleInMs;
        final long cooldownMs;

        /**
         * @param overload     a group whose load reaches this in {@code sustainUp} reports in a row splits ...
         * @param smoothedUp   ... if its EWMA has too, when set (the original policy); else on the raw reports
         * @param underload    groups at or below this (raw and EWMA) for {@code scaleInMs} may merge ...
         * @param mergeCeiling ... when their EWMAs sum to at most this (below {@code overload}: no flapping)
         * @param alpha        EWMA weight of the newest report
         * @param cooldownMs   a core touched by a split or merge takes part in no other for this long
         */
        public Params(double overload, double underload, double mergeCeiling, double alpha, int sustainUp,
                      boolean smoothedUp, long scaleInMs, long cooldownMs) {
            if (!(0 < underload && underload < overload && overload <= 1.0)) {
                throw new IllegalArgumentException("need 0 < underload (" + underload + ") < overload ("
                        + overload + ") <= 1");
            }
            if (!(2 * underload <= mergeCeiling && mergeCeiling < overload)) {
                throw new IllegalArgumentException("need 2 * underload (" + underload + ") <= mergeCeiling ("
                        + mergeCeiling + ") < overload (" + overload + "): a merged group must not overload");
            }
            if (!(0 < alpha && alpha <= 1) || sustainUp < 1 || scaleInMs < 0 || cooldownMs < 0) {
                throw new IllegalArgumentException("need 0 < alpha (" + alpha + ") <= 1, sustainUp ("
                        + sustainUp + ") >= 1, scaleInMs (" + scaleInMs + ") >= 0, cooldownMs ("
                        + cooldownMs + ") >= 0");
            }
            this.overload = overload;
            this.underload = underload;
            this.mergeCeiling = mergeCeiling;
            this.alpha = alpha;
            this.sustainUp = sustainUp;
            this.smoothedUp = smoothedUp;
            this.scaleInMs = scaleInMs;
            this.cooldownMs = cooldownMs;
        }

        public long cooldownMs() {
            return cooldownMs;
        }

        /**
         * The load at which agents should report at once rather than at the next interval (StreamLoad's alert):
         * the overload threshold when one raw report decides a split; none (0) for a policy that smooths
         * reports, which one early report would not move.
         */
        public double alertLoad() {
            return smoothedUp || sustainUp > 1 ? 0 : overload;
        }
    }

    /** Per group: smoothed load and how long it has been above/below the thresholds. */
    private static final class Track {
        double ewma;
        int over;
        long overSince;
        boolean under;
        long underSince;
    }

    private final Params params;
    private final Map<ChainId, Map<String, Track>> tracks = new HashMap<>();
    private final Map<String, Long> coreChanged = new HashMap<>();

    public ScalingPolicy(Params params) {
        this.params = params;
    }

    public Params params() {
        return params;
    }

    /**
     * Takes one interval's measurement of a chain.
     *
     * @return the split or merge to do now, if any
     */
    public synchronized Optional<ScalingDecision> evaluate(ChainLoad c, long nowMs) {
        Map<String, Track> byGroup = tracks.computeIfAbsent(c.chain(), k -> new HashMap<>());
        Set<String> present = c.groups().stream().map(GroupLoad::groupId).collect(Collectors.toSet());
        // a group gone, or not measured this interval (ChainLoad#unmeasured: its server silent or restarting),
        // loses its EWMA and its time over or under: unknown, not zero, and not its last value either; it counts
        // again from its first fresh measurement, so a merge needs scaleInMs of fresh idle reports after a gap
        byGroup.keySet().retainAll(present);
        for (GroupLoad g : c.groups()) {
            Track t = byGroup.get(g.groupId());
            if (t == null) {
                t = new Track();
                t.ewma = g.load();
                byGroup.put(g.groupId(), t);
            } else {
                t.ewma = params.alpha * g.load() + (1 - params.alpha) * t.ewma;
            }
            if (g.load() >= params.overload) {
                t.overSince = t.over == 0 ? nowMs : t.overSince;
                t.over++;
            } else {
                t.over = 0;
            }
            if (t.ewma <= params.underload && g.load() <= params.underload) {
                t.underSince = t.under ? t.underSince : nowMs;
                t.under = true;
            } else {
                t.under = false;
            }
        }
        if (!c.autoScale()) {
            return Optional.empty();
        }
        Optional<ScalingDecision> split = split(c, byGroup, nowMs);
        return split.isPresent() ? split : merge(c, byGroup, nowMs);
    }

    private Optional<ScalingDecision> split(ChainLoad c, Map<String, Track> byGroup, long nowMs) {
        // a core on the chain's server first; when it has none (all taken, or maxCpuCores reached there), one on
        // another server (docs/scaling.md#scale-out)
        boolean here = c.cores() < c.maxCores() && c.freeHere() != 0;
        if (!here && c.freeElsewhere() <= 0) {
            return Optional.empty();
        }
        String out = here ? "" : String.format(Locale.ROOT, "no core free on %s (%d of at most %d cores used, %s"
                + " free): new half on another server (%d cores free there)", c.server(), c.cores(), c.maxCores(),
                c.freeHere() < 0 ? "?" : Integer.toString(c.freeHere()), c.freeElsewhere());
        return c.groups().stream()
                .filter(g -> (wholeSplittable(g) || classSplit(g).isPresent()) && !cooling(serverOf(c, g), g.core(),
                        nowMs))
                .filter(g -> {
                    Track t = byGroup.get(g.groupId());
                    return t.over >= params.sustainUp && (!params.smoothedUp || t.ewma >= params.overload);
                })
                .max(Comparator.comparingDouble(g -> byGroup.get(g.groupId()).ewma + g.load()))
                .map(g -> {
                    Track t = byGroup.get(g.groupId());
                    String why = String.format(Locale.ROOT, "group %s on core %d: load %.2f (ewma %.2f) >= %.2f"
                            + " in %d report(s)", g.groupId(), g.core(), g.load(), t.ewma, params.overload, t.over);
                    Optional<ClassCut> cut = classSplit(g);
                    if (cut.isPresent() && (!wholeSplittable(g) || cut.get().larger < wholeLarger(g) - MIN_GAIN)) {
                        ClassCut k = cut.get();
                        return ScalingDecision.splitClass(c.chain(), g.groupId(), k.cls, k.bit, why + String.format(
                                Locale.ROOT, "; class %d divided by source-port bit %d (%.0f%% of its packets have"
                                        + " it set; whole classes: larger half %.0f%%)", k.cls, k.bit,
                                100 * k.share, wholeSplittable(g) ? 100 * wholeLarger(g) : 100.0), t.overSince);
                    }
                    return ScalingDecision.split(c.chain(), g.groupId(), why, t.overSince);
                })
                .map(d -> here ? d : d.toOtherServer(out));
    }

    /** The server a group runs on: its chain's, or the one it was scaled out to. */
    private static String serverOf(ChainLoad c, GroupLoad g) {
        return g.remote() ? g.server() : c.server();
    }

    /** A class split must beat the whole-class halves by this much of the group's rate to be chosen. */
    static final double MIN_GAIN = 0.05;
    /** A class split whose larger part would keep more than this of the group's rate is not worth a core. */
    static final double MAX_LARGER = 0.75;
    /** Packets a class's bit counts must hold before they are trusted. */
    static final long MIN_PACKETS = 16;

    private static boolean wholeSplittable(GroupLoad g) {
        return g.splittable() && g.classRates().size() >= 2;
    }

    /** The larger half's share of the group's rate when whole classes are divided (GroupSplitter). */
    private static double wholeLarger(GroupLoad g) {
        double total = g.classRates().values().stream().mapToDouble(r -> Math.max(0, r)).sum();
        if (total <= 0) {
            return 0.5;
        }
        GroupSplitter.Halves h = GroupSplitter.split(List.copyOf(g.classRates().keySet()), g.classRates());
        return Math.max(h.keepRate(), h.moveRate()) / total;
    }

    /** How to divide a group's heaviest divisible class, and the larger part's predicted share of its rate. */
    private static final class ClassCut {
        final int cls;
        final int bit;
        final double share;
        final double larger;

        ClassCut(int cls, int bit, double share, double larger) {
            this.cls = cls;
            this.bit = bit;
            this.share = share;
            this.larger = larger;
        }
    }

    /**
     * The heaviest class with trusted bit counts, divided by its most balanced bit, when the larger part of the
     * group after it is at most {@link #MAX_LARGER} of the group's rate (docs/scaling.md#class-split).
     */
    private static Optional<ClassCut> classSplit(GroupLoad g) {
        double total = g.classRates().values().stream().mapToDouble(r -> Math.max(0, r)).sum();
        return g.classBits().entrySet().stream().filter(e -> e.getValue().packets() >= MIN_PACKETS)
                .max(Comparator.comparingDouble((Map.Entry<Integer, ClassBits> e) -> g.classRates()
                        .getOrDefault(e.getKey(), 0.0)).thenComparing(e -> -e.getKey()))
                .flatMap(e -> {
                    ClassBits b = e.getValue();
                    if (b.bestBit().isEmpty()) {
                        return Optional.empty();
                    }
                    int bit = b.bestBit().getAsInt();
                    double rate = Math.max(0, g.classRates().getOrDefault(e.getKey(), 0.0));
                    // with no rate measured, the class's packets alone decide
                    double moved = total > 0 ? rate * b.share(bit) / total : b.share(bit);
                    double larger = Math.max(moved, 1 - moved);
                    return larger <= MAX_LARGER ? Optional.of(new ClassCut(e.getKey(), bit, b.share(bit), larger))
                            : Optional.empty();
                });
    }

    private Optional<ScalingDecision> merge(ChainLoad c, Map<String, Track> byGroup, long nowMs) {
        List<GroupLoad> idle = c.groups().stream()
                .filter(g -> byGroup.get(g.groupId()).under
                        && nowMs - byGroup.get(g.groupId()).underSince >= params.scaleInMs)
                .filter(g -> !cooling(serverOf(c, g), g.core(), nowMs))
                .collect(Collectors.toList());
        ScalingDecision best = null;
        double bestSum = Double.MAX_VALUE;
        for (int i = 0; i < idle.size(); i++) {
            for (int j = i + 1; j < idle.size(); j++) {
                GroupLoad a = idle.get(i);
                GroupLoad b = idle.get(j);
                boolean sameServer = serverOf(c, a).equals(serverOf(c, b));
                if (!a.statefulKey().equals(b.statefulKey()) || sameServer && a.core() == b.core()
                        || !joinable(a, b) || a.remote() && b.remote()) {
                    continue;
                }
                if (a.remote() || b.remote()) {
                    // a group on another server comes back: the chain's server keeps its cores, the other's goes
                    GroupLoad home = a.remote() ? b : a;
                    GroupLoad away = a.remote() ? a : b;
                    double sum = byGroup.get(a.groupId()).ewma + byGroup.get(b.groupId()).ewma;
                    if (sum <= params.mergeCeiling && sum < bestSum) {
                        bestSum = sum;
                        best = ScalingDecision.merge(c.chain(), home.groupId(), away.groupId(), mergeReason(c,
                                byGroup, home, away), Math.max(byGroup.get(a.groupId()).underSince,
                                byGroup.get(b.groupId()).underSince));
                    }
                    continue;
                }
                // merging frees b's core only when no other group of the chain runs there
                boolean freesCore = c.groups().stream().noneMatch(g -> g != b && g.core() == b.core())
                        || c.groups().stream().noneMatch(g -> g != a && g.core() == a.core());
                if (!freesCore || c.cores() - 1 < c.minCores()) {
                    continue;
                }
                double sum = byGroup.get(a.groupId()).ewma + byGroup.get(b.groupId()).ewma;
                if (sum > params.mergeCeiling || sum >= bestSum) {
                    continue;
                }
                // the original group (shorter id, e.g. g0 before g0.1) absorbs the one split from it
                boolean aFirst = a.groupId().length() < b.groupId().length()
                        || a.groupId().length() == b.groupId().length() && a.groupId().compareTo(b.groupId()) < 0;
                GroupLoad keep = aFirst ? a : b;
                GroupLoad retire = aFirst ? b : a;
                long since = Math.max(byGroup.get(a.groupId()).underSince, byGroup.get(b.groupId()).underSince);
                bestSum = sum;
                best = ScalingDecision.merge(c.chain(), keep.groupId(), retire.groupId(), mergeReason(c, byGroup,
                        keep, retire), since);
            }
        }
        return Optional.ofNullable(best);
    }

    private String mergeReason(ChainLoad c, Map<String, Track> byGroup, GroupLoad keep, GroupLoad retire) {
        return String.format(Locale.ROOT, "groups %s (core %d) and %s (core %d%s): ewma %.2f + %.2f <= %.2f, each"
                        + " <= %.2f for %d ms", keep.groupId(), keep.core(), retire.groupId(), retire.core(),
                retire.remote() ? " of " + retire.server() + ", back to " + c.server() : "",
                byGroup.get(keep.groupId()).ewma, byGroup.get(retire.groupId()).ewma, params.mergeCeiling,
                params.underload, params.scaleInMs);
    }

    /**
     * Whether every class both groups hold a slice of comes back as one slice (their slices are two halves). A
     * class both list whole (only in hand-made loads) does not stand in the way.
     */
    static boolean joinable(GroupLoad a, GroupLoad b) {
        return a.classRates().keySet().stream().filter(b.classRates()::containsKey)
                .allMatch(cls -> a.slice(cls).isWhole() && b.slice(cls).isWhole()
                        || a.slice(cls).union(b.slice(cls)).isPresent());
    }

    /**
     * Records that an operation changed these cores of a server: they cool down, and the chain's counters
     * start over (its groups changed).
     */
    public synchronized void applied(ChainId chain, String server, Set<Integer> cores, long nowMs) {
        cores.forEach(core -> coreChanged.put(server + "/" + core, nowMs));
        tracks.remove(chain);
    }

    /** Drops everything known about a chain (removed). */
    public synchronized void forget(ChainId chain) {
        tracks.remove(chain);
    }

    /** The EWMA of a group, for monitoring displays; NaN when unknown. */
    public synchronized double ewma(ChainId chain, String group) {
        Track t = tracks.getOrDefault(chain, Map.of()).get(group);
        return t == null ? Double.NaN : t.ewma;
    }

    private boolean cooling(String server, int core, long nowMs) {
        Long at = coreChanged.get(server + "/" + core);
        return at != null && nowMs - at < params.cooldownMs;
    }

    /** Cores currently cooling down, for tests and displays. */
    synchronized Set<String> coolingCores(long nowMs) {
        Set<String> out = new HashSet<>();
        coreChanged.forEach((k, at) -> {
            if (nowMs - at < params.cooldownMs) {
                out.add(k);
            }
        });
        return out;
    }
}
