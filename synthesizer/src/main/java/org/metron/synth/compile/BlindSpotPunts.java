package org.metron.synth.compile;

import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TargetProfile;
import org.metron.synth.core.Synthesis;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.List;

/**
 * Punts placed just above an entry's rules for packets the device sees differently from Click:
 * <ul>
 *   <li>an entry testing ports or ICMP type on a target that reads them as 0 in every fragment: its
 *       fragments ({@link DeviceMatch#fragmentPunt}), which its rules would judge by ports they do not
 *       read;</li>
 *   <li>frames whose IP header the switch cannot parse, read with every IP field 0 (and dropped by the
 *       chain's CheckIPHeader): before the first entry holding that all-zero packet of each family, unless
 *       its class drops anyway or its rules are a punt already;</li>
 *   <li>later IPv6 fragments on a target that reads their protocol as the fragment header's (44): before
 *       the first entry that tests the protocol of IPv6 packets.</li>
 * </ul>
 * A punt whose cube lies inside one of the last {@link #PUNT_LOOKBACK} ones is left out: the earlier one,
 * higher, takes all its packets.
 */
final class BlindSpotPunts {
    /** How many recent punts a new punt before an entry is compared with (it is left out if one covers it). */
    static final int PUNT_LOOKBACK = 32;

    private BlindSpotPunts() {
    }

    /**
     * The punts before each entry: a list per entry, whose null elements mean nothing matchable (stop).
     *
     * @param device      what the device is asked to match per entry
     * @param exact       exact device matches per entry, null where the target cannot hold it
     * @param classAction what the device does with each class's packets
     */
    static List<List<DeviceMatch.Relaxed>> of(Synthesis.Entries e, List<Cube> device, List<List<RuleMatch>> exact,
                                              RuleAction[] classAction, TargetProfile t) {
        int n = e.size();
        List<List<DeviceMatch.Relaxed>> out = new ArrayList<>(n);
        int[] zeroEntry = new int[2];
        long[][] zero = new long[2][Field.COUNT];
        for (int f = 0; f < 2; f++) {
            zero[f][Field.ETH_TYPE.ordinal()] = f == 0 ? Field.ETH_IP4 : Field.ETH_IP6;
            zeroEntry[f] = -1;
            for (int i = 0; i < n && zeroEntry[f] < 0; i++) {
                if (e.cubes.get(i).matches(zero[f])) {
                    zeroEntry[f] = i;
                }
            }
        }
        List<Cube> recent = new ArrayList<>();
        boolean laterIpv6Punted = t.l4InFirstFragments();
        for (int i = 0; i < n; i++) {
            List<DeviceMatch.Relaxed> pre = new ArrayList<>(0);
            if (DeviceMatch.fragmentBlind(device.get(i), t)) {
                pre.add(DeviceMatch.fragmentPunt(device.get(i), t));
            }
            Cube c = device.get(i);
            if (!laterIpv6Punted && c.get(Field.IP_PROTO) != null
                    && (c.get(Field.ETH_TYPE) == null || IntervalSet.contains(c.get(Field.ETH_TYPE), Field.ETH_IP6))) {
                pre.add(DeviceMatch.laterIpv6FragmentPunt(t));
                laterIpv6Punted = true;
            }
            for (int f = 0; f < 2; f++) {
                if (zeroEntry[f] == i && exact.get(i) != null
                        && classAction[e.classOf(i)].type() != RuleAction.Type.DROP) {
                    Cube z = Cube.ALL;
                    for (Field fd : Field.values()) {
                        if (fd != Field.ETH_SRC && fd != Field.ETH_DST) {
                            z = z.with(fd, IntervalSet.point(zero[f][fd.ordinal()]));
                        }
                    }
                    pre.add(DeviceMatch.relaxed(z, t));
                }
            }
            List<DeviceMatch.Relaxed> kept = new ArrayList<>(pre.size());
            for (DeviceMatch.Relaxed r : pre) {
                if (r != null && covered(r.cube, recent)) {
                    continue;
                }
                kept.add(r);
                if (r != null) {
                    recent.add(r.cube);
                    if (recent.size() > PUNT_LOOKBACK) {
                        recent.remove(0);
                    }
                }
            }
            out.add(kept);
        }
        return out;
    }

    private static boolean covered(Cube c, List<Cube> cubes) {
        for (Cube d : cubes) {
            if (c.subsetOf(d)) {
                return true;
            }
        }
        return false;
    }
}
