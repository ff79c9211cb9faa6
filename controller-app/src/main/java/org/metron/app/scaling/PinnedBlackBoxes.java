package org.metron.app.scaling;

import org.metron.synth.BlackBoxSpec;
import org.metron.synth.BlackBoxSpec.FlowStatePolicy;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.NfSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Black-box NFs that declare {@code "flowState": "pinned"} (docs/blackbox.md): their per-flow state lives inside
 * the NF's process, which Metron can neither read nor copy. A split or merge moves classes, with the flows already
 * in them, to another instance of the NF, which has no state for those flows; so an operation that would move a
 * group's flows off a pinned black box is refused, naming it. Keeping each existing flow on its old instance
 * instead would need a rule per live flow at the offload device, which Metron's class-level rules do not have.
 * Pure.
 */
final class PinnedBlackBoxes {
    private static final Pattern BOX = Pattern.compile("BlackBoxNF\\(NAME ([^,)\\s]+)");

    private PinnedBlackBoxes() {
    }

    /** The NFs of {@code group}'s config that the chain declares pinned, in config order. */
    static List<String> of(String chainJson, ClassGroup group) {
        ChainSpec spec = ChainSpec.fromJson(chainJson);
        List<String> pinned = new ArrayList<>();
        Matcher m = BOX.matcher(group.clickConfig());
        while (m.find()) {
            String nf = m.group(1);
            boolean isPinned = spec.nfs().stream().filter(n -> n.name().equals(nf)).map(NfSpec::blackBox)
                    .anyMatch(b -> b.map(BlackBoxSpec::flowState).orElse(FlowStatePolicy.NONE)
                            == FlowStatePolicy.PINNED);
            if (isPinned && !pinned.contains(nf)) {
                pinned.add(nf);
            }
        }
        return pinned;
    }

    /** Why {@code what} (e.g. "group g1 cannot split") is refused, or null when the group has no pinned box. */
    static String refusal(String chainJson, ClassGroup group, String what) {
        List<String> pinned = of(chainJson, group);
        if (pinned.isEmpty()) {
            return null;
        }
        return what + ": it runs black-box NF" + (pinned.size() > 1 ? "s " : " ") + String.join(", ", pinned)
                + " with flowState pinned, whose per-flow state stays inside its process: moving classes would take "
                + "their existing flows to another instance without that state";
    }
}
