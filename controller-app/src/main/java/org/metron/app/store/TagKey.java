package org.metron.app.store;

import org.metron.app.api.Tag;

import java.util.Objects;

/**
 * Key of the tag map. A group tag is unique network-wide, not only on its server NIC: transit switches
 * forward on the tag alone (VLAN id, or the MAC group bits), so two NICs behind a shared switch must never hold
 * the same tag. This is what makes VLAN tags work across several switches.
 */
public final class TagKey {
    private final Tag tag;

    public TagKey(Tag tag) {
        this.tag = Objects.requireNonNull(tag);
    }

    public Tag tag() {
        return tag;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TagKey && ((TagKey) o).tag.equals(tag);
    }

    @Override
    public int hashCode() {
        return tag.hashCode();
    }

    @Override
    public String toString() {
        return tag.toString();
    }
}
