package org.metron.app.api;

import com.google.common.base.MoreObjects;

import java.util.Objects;

/** One traffic class of a chain as operators see it: what it matches, where it runs and with which tag. */
public final class TrafficClassInfo {
    private final ChainId chainId;
    private final int classId;
    private final String match;
    private final String groupId;
    private final Tag tag;
    private final int core;
    private final boolean needsServer;

    /**
     * @param match       human-readable filter of the class (the synthesizer's description)
     * @param groupId     group the class belongs to; empty when the class never reaches a server
     * @param tag         tag of that group; null when no server or not placed yet
     * @param core        core of that group; -1 when none
     * @param needsServer whether packets of the class go to the server (false: dropped or forwarded by the switch)
     */
    public TrafficClassInfo(ChainId chainId, int classId, String match, String groupId, Tag tag, int core,
                            boolean needsServer) {
        this.chainId = Objects.requireNonNull(chainId);
        this.classId = classId;
        this.match = Objects.requireNonNull(match);
        this.groupId = groupId == null ? "" : groupId;
        this.tag = tag;
        this.core = core;
        this.needsServer = needsServer;
    }

    public ChainId chainId() {
        return chainId;
    }

    public int classId() {
        return classId;
    }

    public String match() {
        return match;
    }

    public String groupId() {
        return groupId;
    }

    /** Tag of the class's group, or null. */
    public Tag tag() {
        return tag;
    }

    public int core() {
        return core;
    }

    public boolean needsServer() {
        return needsServer;
    }

    @Override
    public String toString() {
        return MoreObjects.toStringHelper(this).add("chain", chainId).add("class", classId).add("match", match)
                .add("group", groupId).add("tag", tag).add("core", core).toString();
    }
}
