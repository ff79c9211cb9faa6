package org.metron.app.api;

import com.google.common.base.MoreObjects;
import com.google.common.collect.ImmutableList;

import java.util.List;
import java.util.Objects;

/** One traffic-class group of a placed chain: its tag on the server NIC, the core that runs it, its classes. */
public final class GroupAssignment {
    private final String groupId;
    private final Tag tag;
    private final int core;
    private final List<Integer> classIds;

    public GroupAssignment(String groupId, Tag tag, int core, List<Integer> classIds) {
        this.groupId = Objects.requireNonNull(groupId, "groupId");
        this.tag = Objects.requireNonNull(tag, "tag");
        this.core = core;
        this.classIds = ImmutableList.copyOf(classIds);
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

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GroupAssignment)) {
            return false;
        }
        GroupAssignment g = (GroupAssignment) o;
        return groupId.equals(g.groupId) && tag.equals(g.tag) && core == g.core && classIds.equals(g.classIds);
    }

    @Override
    public int hashCode() {
        return Objects.hash(groupId, tag, core, classIds);
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("group", groupId).add("tag", tag).add("core", core)
                .add("classes", classIds).toString();
    }
}
