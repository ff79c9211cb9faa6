package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** One traffic-class group of a placed chain: its tag on the server NIC, the core that runs it, its classes. */
public final class GroupAssignment {
    private final String groupId;
    private final Tag tag;
    private final int core;
    private final List<Integer> classIds;
    private final Map<Integer, ClassSlice> slices;

    public GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds) {
        this(groupId, tag, core, classIds, Map.of());
    }

    /**
     * @param slices the classes of {@code classIds} this group holds only a slice of (a class divided between
     *               groups by source-port bits, docs/scaling.md#class-split); the others it holds whole
     * @throws IllegalArgumentException for a slice of a class not in {@code classIds}
     */
    public GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds, Map<Integer, ClassSlice> slices) {
        this.groupId = Objects.requireNonNull(groupId, "groupId");
        this.tag = Objects.requireNonNull(tag, "tag");
        this.core = core;
        this.classIds = ImmutableList.copyOf(classIds);
        TreeMap<Integer, ClassSlice> b = new TreeMap<>();
        slices.forEach((cls, s) -> {
            if (!this.classIds.contains(cls)) {
                throw new IllegalArgumentException("group " + groupId + ": slice " + s + " of class " + cls
                        + ", which is not among its classes " + classIds);
            }
            if (!s.isWhole()) {
                b.put(cls, s);
            }
        });
        this.slices = ImmutableMap.copyOf(b);
    }

    public String groupId() {
        return groupId;
    }

    public Tag tag() {
        return tag;
    }

    public int core() {
        return core;
    }

    public List<Integer> classIds() {
        return classIds;
    }

    /** The classes this group holds only a slice of, and their slices (absent = the whole class). */
    public Map<Integer, ClassSlice> slices() {
        return slices;
    }

    /** The part of class {@code cls} this group holds: {@link ClassSlice#WHOLE} unless sliced. */
    public ClassSlice slice(int cls) {
        return slices.getOrDefault(cls, ClassSlice.WHOLE);
    }

    /** Class ids with their slices, e.g. "0 sport&0x0001=0x0001, 2", for operators. */
    public String classesText() {
        StringBuilder sb = new StringBuilder();
        for (int c : classIds) {
            sb.append(sb.length() > 0 ? ", " : "").append(c);
            if (slices.containsKey(c)) {
                sb.append(' ').append(slices.get(c));
            }
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GroupAssignment)) {
            return false;
        }
        GroupAssignment g = (GroupAssignment) o;
        return groupId.equals(g.groupId) && tag.equals(g.tag) && core == g.core && classIds.equals(g.classIds)
                && slices.equals(g.slices);
    }

    @Override
    public int hashCode() {
        return Objects.hash(groupId, tag, core, classIds, slices);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("group", groupId).add("tag", tag).add("core", core)
                .add("classes", classesText()).toString();
    }
}
