package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.synth.TagType;
import org.metron.app.spi.MetronMap;
import org.metron.app.store.TagKey;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Allocates group tags for a chain's groups on one server NIC and releases them with the chain. Claims go
 * through {@link MetronMap#putIfAbsent}, so two controller instances never hand out the same tag; tags the
 * server's agent already dispatches (e.g. left by another controller) are skipped.
 */
public final class TagAllocator {
    private final MetronMap<TagKey, TagAllocation> tags;

    public TagAllocator(MetronMap<TagKey, TagAllocation> tags) {
        this.tags = Objects.requireNonNull(tags);
    }

    /**
     * Claims one tag per group, lowest free first; all or nothing.
     *
     * @param inUseOnServer group tags the server's agent reports in use
     * @return tags in the order of {@code groupIds}
     * @throws MetronException IMPOSSIBLE_PLACEMENT when the tag space is exhausted (nothing claimed then)
     */
    public List<Tag> allocate(DeviceId server, String nic, TagType type, ChainId chain, List<String> groupIds,
                              Set<Integer> inUseOnServer) {
        Map<TagKey, TagAllocation> taken = tags.snapshot();
        List<Tag> claimed = new ArrayList<>();
        int next = type.min();
        for (String group : groupIds) {
            Tag got = null;
            for (; next <= type.max() && got == null; next++) {
                Tag candidate = Tag.of(type, next);
                TagKey key = new TagKey(candidate);
                if (inUseOnServer.contains(next) || taken.containsKey(key)) {
                    continue;
                }
                if (tags.putIfAbsent(key, new TagAllocation(server, nic, candidate, chain, group))) {
                    got = candidate;
                }
            }
            if (got == null) {
                claimed.forEach(t -> tags.remove(new TagKey(t)));
                throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "no free " + type + " tag for chain "
                        + chain + " group " + group + " on " + server + "/" + nic + " (" + type.min() + ".."
                        + type.max() + " all in use)");
            }
            claimed.add(got);
        }
        return claimed;
    }

    /**
     * The tags {@link #allocate} would hand out now, without claiming them (dry runs).
     */
    public List<Tag> peek(TagType type, int count, Set<Integer> inUseOnServer) {
        Map<TagKey, TagAllocation> taken = tags.snapshot();
        List<Tag> out = new ArrayList<>();
        for (int v = type.min(); v <= type.max() && out.size() < count; v++) {
            Tag t = Tag.of(type, v);
            if (!inUseOnServer.contains(v) && !taken.containsKey(new TagKey(t))) {
                out.add(t);
            }
        }
        if (out.size() < count) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "only " + out.size() + " free " + type
                    + " tags, " + count + " needed");
        }
        return out;
    }

    /** Releases every tag the chain holds; answers how many. */
    public int release(ChainId chain) {
        int n = 0;
        for (Map.Entry<TagKey, TagAllocation> e : tags.snapshot().entrySet()) {
            if (e.getValue().chainId().equals(chain) && tags.remove(e.getKey()).isPresent()) {
                n++;
            }
        }
        return n;
    }

    /** Releases those of {@code which} the chain holds (one version's tags, after a chain update); answers how many. */
    public int release(ChainId chain, Collection<Tag> which) {
        int n = 0;
        for (Tag t : which) {
            TagKey key = new TagKey(t);
            Optional<TagAllocation> held = tags.get(key).map(org.onosproject.store.service.Versioned::value);
            if (held.isPresent() && held.get().chainId().equals(chain) && tags.remove(key).isPresent()) {
                n++;
            }
        }
        return n;
    }

    public Collection<TagAllocation> allocations() {
        return tags.snapshot().values();
    }
}
