package org.metron.app.scaling;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableMap;

import org.metron.app.api.ClassSlice;

import java.util.Map;
import java.util.Objects;

/**
 * One group's measured load over one monitoring interval: the share of its core's cycles spent in the group's
 * graph (busy-cycle delta over the core's cycle delta) and each class's packet rate.
 */
public final class GroupLoad {
    private final String groupId;
    private final int core;
    private final double load;
    private final Map<Integer, Double> classRates;
    private final String statefulKey;
    private final boolean splittable;
    private final Map<Integer, ClassSlice> slices;
    private final Map<Integer, ClassBits> classBits;
    /** The server the group runs on when it is not its chain's (a scale-out); "" on the chain's server. */
    private final String server;

    /**
     * @param load        0..1 share of the core's cycles over the interval
     * @param classRates  class id → packets per second over the interval
     * @param statefulKey the group's stateful signature: only groups with equal keys may merge
     * @param splittable  false for groups that classify unclassified traffic in software (their tag receives
     *                    every class the offload device could not classify, so moving classes elsewhere
     *                    would not move their load), and for groups whose classes move only together (a reply
     *                    class with the forward classes it answers, docs/scaling.md#replies)
     */
    public GroupLoad(String groupId, int core, double load, Map<Integer, Double> classRates, String statefulKey,
                     boolean splittable) {
        this(groupId, core, load, classRates, statefulKey, splittable, Map.of(), Map.of());
    }

    /**
     * @param slices    the classes the group holds only a slice of (docs/scaling.md#class-split)
     * @param classBits per class that may be divided by source-port bits, how its packets spread over them
     */
    public GroupLoad(String groupId, int core, double load, Map<Integer, Double> classRates, String statefulKey,
                     boolean splittable, Map<Integer, ClassSlice> slices, Map<Integer, ClassBits> classBits) {
        this(groupId, core, load, classRates, statefulKey, splittable, slices, classBits, "");
    }

    private GroupLoad(String groupId, int core, double load, Map<Integer, Double> classRates, String statefulKey,
                      boolean splittable, Map<Integer, ClassSlice> slices, Map<Integer, ClassBits> classBits,
                      String server) {
        this.server = Objects.requireNonNull(server, "server");
        this.slices = ImmutableMap.copyOf(slices);
        this.classBits = ImmutableMap.copyOf(classBits);
        this.groupId = Objects.requireNonNull(groupId, "groupId");
        if (!(load >= 0)) {
            throw new IllegalArgumentException("group " + groupId + ": load " + load + " is not >= 0");
        }
        this.core = core;
        this.load = load;
        this.classRates = ImmutableMap.copyOf(classRates);
        this.statefulKey = Objects.requireNonNull(statefulKey, "statefulKey");
        this.splittable = splittable;
    }

    public String groupId() {
        return groupId;
    }

    public int core() {
        return core;
    }

    public double load() {
        return load;
    }

    public Map<Integer, Double> classRates() {
        return classRates;
    }

    public String statefulKey() {
        return statefulKey;
    }

    public boolean splittable() {
        return splittable;
    }

    /** The classes this group holds only a slice of. */
    public Map<Integer, ClassSlice> slices() {
        return slices;
    }

    /** The part of class {@code cls} the group holds. */
    public ClassSlice slice(int cls) {
        return slices.getOrDefault(cls, ClassSlice.WHOLE);
    }

    /** Per class that may be divided by source-port bits, how its packets spread over them. */
    public Map<Integer, ClassBits> classBits() {
        return classBits;
    }

    /** This measurement, of a group running on {@code otherServer} rather than its chain's server. */
    public GroupLoad onServer(String otherServer) {
        return new GroupLoad(groupId, core, load, classRates, statefulKey, splittable, slices, classBits,
                otherServer);
    }

    /** The other server the group runs on (docs/scaling.md#scale-out); "" on its chain's server. */
    public String server() {
        return server;
    }

    /** Whether it runs on another server than its chain's. */
    public boolean remote() {
        return !server.isEmpty();
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("group", groupId).add("core", core).add("server", server).add("load", load)
                .add("classes", classRates.keySet()).toString();
    }
}
