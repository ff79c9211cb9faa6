package org.metron.synth;

import java.util.List;
import java.util.Objects;

/**
 * A traffic-class group: classes with identical stateful operations, run together by one server core under
 * one tag. The controller splits and merges groups when scaling; {@link #statefulKey()} says which groups may
 * merge (equal keys). Immutable.
 */
public final class ClassGroup {
    private final int id;
    private final List<Integer> classIds;
    private final String clickConfig;
    private final String statefulKey;
    private final boolean classifies;

    /**
     * Creates a group.
     *
     * @param id          group index in {@link CompiledChain#groups()}
     * @param classIds    member classes
     * @param clickConfig the agent's group config (docs/contracts.md#click-dialect-of-group-configs)
     * @param statefulKey the members' common stateful key ("" for the software-classifier group if mixed)
     * @param classifies  true if this group also receives {@link TrafficClass#UNCLASSIFIED} packets and
     *                    classifies them in software
     */
    public ClassGroup(int id, List<Integer> classIds, String clickConfig, String statefulKey, boolean classifies) {
        this.id = id;
        this.classIds = List.copyOf(classIds);
        this.clickConfig = Objects.requireNonNull(clickConfig, "clickConfig");
        this.statefulKey = Objects.requireNonNull(statefulKey, "statefulKey");
        this.classifies = classifies;
    }

    public int id() {
        return id;
    }

    public List<Integer> classIds() {
        return classIds;
    }

    /** The Click configuration the agent runs for this group. */
    public String clickConfig() {
        return clickConfig;
    }

    public String statefulKey() {
        return statefulKey;
    }

    /** True if this group runs the software classifier for packets the offload device left unclassified. */
    public boolean classifies() {
        return classifies;
    }

    @Override
    public String toString() {
        return "group " + id + " classes " + classIds;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ClassGroup)) {
            return false;
        }
        ClassGroup g = (ClassGroup) o;
        return id == g.id && classIds.equals(g.classIds) && clickConfig.equals(g.clickConfig)
                && statefulKey.equals(g.statefulKey) && classifies == g.classifies;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, classIds, clickConfig, statefulKey, classifies);
    }
}
