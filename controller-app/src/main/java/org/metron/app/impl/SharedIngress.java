package org.metron.app.impl;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TrafficClass;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.CubeText;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.RuleSpace;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a chain may classify traffic at a point where another chain already does (docs/updates.md#shared-ingress):
 * both must classify it on the point's own device, and their rule tables must not take each other's traffic
 * ({@link RuleSpace#overlap}). Pure.
 */
final class SharedIngress {
    private SharedIngress() {
    }

    /** One chain's rules where traffic enters at a point: forward traffic at its ingress, replies at its egress. */
    static final class Entry {
        final ChainId chain;
        final ConnectPoint point;
        final DeviceId classifiedOn;
        final List<OffloadRule> rules;
        final boolean replies;

        Entry(ChainId chain, ConnectPoint point, DeviceId classifiedOn, List<OffloadRule> rules, boolean replies) {
            this.chain = chain;
            this.point = point;
            this.classifiedOn = classifiedOn;
            this.rules = rules;
            this.replies = replies;
        }

        /** "chain a's traffic", "chain a's replies". */
        String what() {
            return "chain " + chain + "'s " + (replies ? "replies" : "traffic");
        }

        /**
         * The rules a compiled chain installs where its traffic (or its replies) enters; a chain whose classes its
         * offload device cannot tell apart sends everything there to software, which is one rule taking everything.
         */
        static Entry of(ChainId chain, ConnectPoint point, DeviceId classifiedOn, CompiledChain cc, boolean replies) {
            List<OffloadRule> rules = replies ? cc.replyRules() : cc.offloadRules();
            return new Entry(chain, point, classifiedOn, rules.isEmpty()
                    ? List.of(OffloadRule.of(0, RuleMatch.builder().build(), RuleAction.toServer(
                    replies ? TrafficClass.REPLY_UNCLASSIFIED : TrafficClass.UNCLASSIFIED))) : rules, replies);
        }
    }

    /** A packet of the header space as IPClassifier text, its Ethernet-level fields (no such syntax) first. */
    static String packet(Cube c) {
        List<String> terms = new ArrayList<>();
        Cube rest = c;
        for (Field f : new Field[] {Field.ETH_SRC, Field.ETH_DST, Field.VLAN}) {
            long[] set = c.get(f);
            if (set != null) {
                terms.add(f == Field.VLAN ? (set[0] == 0 ? "untagged" : "vlan " + set[0])
                        : (f == Field.ETH_SRC ? "ether src " : "ether dst ") + MacAddress.valueOf(set[0]));
                rest = rest.without(f);
            }
        }
        if (!rest.isAll() || terms.isEmpty()) {
            terms.add(CubeText.format(rest));
        }
        return String.join(" and ", terms);
    }

    /**
     * @throws MetronException IMPOSSIBLE_PLACEMENT naming both chains, the point and an example packet of the
     *                         overlap, when {@code mine} cannot share the point with {@code theirs}
     */
    static void require(Entry mine, Entry theirs) {
        String both = mine.what() + " and " + theirs.what() + " both enter at " + mine.point;
        if (!mine.classifiedOn.equals(mine.point.deviceId()) || !theirs.classifiedOn.equals(theirs.point.deviceId())) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, both + ", but chains share an entry point only when "
                    + "both classify what enters there on its own device " + mine.point.deviceId() + " (" + mine.chain
                    + " on " + mine.classifiedOn + ", " + theirs.chain + " on " + theirs.classifiedOn + ")");
        }
        Optional<Cube> overlap;
        try {
            overlap = RuleSpace.overlap(mine.rules, theirs.rules);
        } catch (IllegalStateException e) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, both + " and could not be shown disjoint: "
                    + e.getMessage());
        }
        if (overlap.isPresent()) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, both + " and overlap, e.g. the packet '"
                    + packet(overlap.get()) + "'; chains share an entry point only when what enters "
                    + "there is disjoint");
        }
    }
}
