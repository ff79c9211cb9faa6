package org.metron.synth.compile;

import org.metron.synth.RuleMatch;
import org.metron.synth.SynthesisException;
import org.metron.synth.hs.Cube;

import java.util.List;

/**
 * Priority tiers of one ingress's entries: consecutive entries that pairwise do not overlap share a priority
 * (first match among them is decided by the match alone), so a chain needs far fewer levels than entries.
 */
final class PriorityTiers {
    /** Entries per priority tier at most; a larger tier only saves priority levels, never changes meaning. */
    static final int MAX_TIER = 16;
    /** Priority of the first tier; OpenFlow priorities are 16-bit. */
    static final int TOP_PRIORITY = 60000;

    private PriorityTiers() {
    }

    /**
     * Each entry's tier (0 first). An entry the device cannot hold gets a tier of its own (its punt rule is a
     * superset that may overlap anything), and so does each punt placed before an entry (a tier between the entry
     * and everything above it).
     *
     * @param device what the device is asked to match per entry
     * @param exact  exact device matches per entry, null where the target cannot hold it
     * @param before punts placed before each entry, or null if none are
     * @throws SynthesisException if the tiers need more levels than a 16-bit priority leaves
     */
    static int[] of(List<Cube> device, List<List<RuleMatch>> exact, List<List<DeviceMatch.Relaxed>> before) {
        int n = device.size();
        int[] tier = new int[n];
        int cur = 0;
        int tierStart = 0;
        for (int i = 0; i < n; i++) {
            boolean pre = before != null && !before.get(i).isEmpty();
            if (pre) {
                cur += before.get(i).size();
            }
            boolean newTier = i > 0 && (pre || i - tierStart >= MAX_TIER || exact.get(i) == null
                    || exact.get(i - 1) == null);
            for (int j = tierStart; j < i && !newTier; j++) {
                newTier = device.get(j).overlaps(device.get(i));
            }
            if (newTier) {
                cur++;
                tierStart = i;
            }
            tier[i] = cur;
        }
        if (cur >= TOP_PRIORITY - 2) {
            throw new SynthesisException("chain needs " + (cur + 1) + " priority levels, more than "
                    + "the " + (TOP_PRIORITY - 2) + " a 16-bit priority field leaves");
        }
        return tier;
    }

    /** The priority of a tier's rules. */
    static int priority(int tier) {
        return TOP_PRIORITY - tier;
    }
}
