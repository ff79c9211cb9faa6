package org.metron.app.rest;

import org.metron.app.api.Placement;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.TrafficClassInfo.Classification;
import org.metron.app.scaling.ScalingEvent;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instruction;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Metron's values as people read them: the one place that formats them for the CLI, the GUI's tables, the
 * embedded dashboard and the prose fields of the REST JSON ({@link MetronJson}). Absent values read as a word
 * ("none", "-"), never as {@code Optional[...]} or {@code null}.
 */
public final class MetronText {
    /** What an absent value reads as in tables. */
    public static final String NONE = "-";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);

    private MetronText() {
    }

    /** An optional value's text, or {@code absent}. */
    public static String or(Optional<?> value, String absent) {
        return value.map(Object::toString).orElse(absent);
    }

    /** The server a placement runs on; a chain the switches run alone has none. */
    public static String server(Placement p) {
        return or(p.server(), "none (fully offloaded)");
    }

    /** The server a group runs on: its chain's, or the one scaling placed it on (docs/scaling.md#scale-out). */
    public static String server(Placement p, org.metron.app.api.GroupAssignment g) {
        return g.server().map(Object::toString).orElse(server(p));
    }

    /** The device holding a placement's offload rules. */
    public static String offloadDevice(Placement p) {
        return or(p.offloadDevice(), "none");
    }

    /** A list of numbers (cores, classes) as "1, 2", or "-" when empty. */
    public static String list(Collection<?> values) {
        return values.isEmpty() ? NONE : values.stream().map(Object::toString).collect(Collectors.joining(", "));
    }

    /** A scaling entry's moved classes: "0, 2", or "0 (class 0 divided by source-port bit 3: ...)". */
    public static String moved(ScalingEvent e) {
        return list(e.moved()) + (e.slice().isEmpty() ? "" : " (" + e.slice() + ")");
    }

    /** A 0..1 share as a whole percentage. */
    public static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * share);
    }

    /** A packet rate. */
    public static String pps(double rate) {
        return rate >= 1e6 ? String.format(Locale.ROOT, "%.2f Mpps", rate / 1e6)
                : rate >= 1e3 ? String.format(Locale.ROOT, "%.1f kpps", rate / 1e3)
                : String.format(Locale.ROOT, "%.0f pps", rate);
    }

    /** A chain's pending parts: "pipeline web on metron:... (why); ...". */
    public static String pending(java.util.List<org.metron.app.api.PendingPart> parts) {
        return parts.stream().map(Object::toString).collect(java.util.stream.Collectors.joining("; "));
    }

    /**
     * A black-box NF's status on one line (CLI, GUI): {@code black box NF group=G server=S state=STATE
     * restarts=N sent=N returned=N nfDropped=N ringFull=N bypassed=N failedClosed=N nfLost=N nfSleeps=N nfWakeups=N
     * [link=L] [lastExit=...]}.
     */
    public static String blackBox(org.metron.app.scaling.BlackBoxStatus b) {
        org.metron.agent.v1.BlackBoxStats s = b.stats();
        return "black box " + s.getNf() + " group=" + b.group() + " server=" + b.server() + " element="
                + s.getElement() + " mode=" + s.getMode() + " state=" + s.getState() + " onFailure="
                + s.getOnFailure() + " pid=" + s.getPid() + " restarts=" + s.getRestarts() + " sent=" + s.getSent()
                + " returned=" + s.getReturned() + " nfDropped=" + s.getNfDropped() + " ringFull=" + s.getRingFull()
                + " bypassed=" + s.getBypassed() + " failedClosed=" + s.getFailedClosed() + " nfLost=" + s.getNfLost()
                + " nfSleeps=" + s.getNfSleeps() + " nfWakeups=" + s.getNfWakeups()
                + (s.getLink().isEmpty() ? "" : " link=" + s.getLink())
                + (s.getLastExit().isEmpty() ? "" : " lastExit=" + s.getLastExit().replace(' ', '_'));
    }

    /** A refused server netcfg entry: "metron.FIELD: REASON (refused at TIME)". */
    public static String refused(org.metron.drivers.provider.ServerConfigErrors.Refused r) {
        return "metron." + r.field() + ": " + r.reason() + " (refused at " + r.time() + ")";
    }

    /** A switch counter; -1 (the device keeps none, or could not be read) reads as "-". */
    public static String counter(long value) {
        return value < 0 ? NONE : Long.toString(value);
    }

    /** A wall-clock time (UTC, milliseconds). */
    public static String time(long epochMs) {
        return TIME.format(Instant.ofEpochMilli(epochMs));
    }

    /** A group's tag: "mac 02:4d:00:01" (the group bits of the dst MAC) or "vlan 1". */
    public static String groupTag(Tag t) {
        if (t == null) {
            return NONE;
        }
        if (t.type() == TagType.VLAN) {
            return "vlan " + t.group();
        }
        String mac = t.groupMac().toString().toLowerCase(Locale.ROOT);
        return "mac " + mac.substring(0, 11);
    }

    /** What the switch writes on a class's packets: the class MAC, plus the VLAN id in VLAN mode. */
    public static String classTag(Tag t, int classId) {
        if (t == null) {
            return NONE;
        }
        String mac = t.classMac(classId).toString().toLowerCase(Locale.ROOT);
        return t.type() == TagType.VLAN ? mac + " vlan " + t.group() : mac;
    }

    /** Where a class runs: "group g0, core 2 on metron:srv1", or the group alone before placement. */
    public static String runsOn(TrafficClassInfo c) {
        if (c.groupId().isEmpty()) {
            return "no server";
        }
        if (c.core() < 0) {
            return "group " + c.groupId() + " (not placed)";
        }
        return "group " + c.groupId() + ", core " + c.core() + " on " + or(c.server(), "no server");
    }

    /** What the chain does with the packets of one entry of a class, and where that happens. */
    public static String does(TrafficClassInfo c, TrafficClassInfo.Entry e) {
        boolean atSwitch = e.classification() == Classification.SWITCH;
        switch (c.disposition()) {
            case DROP:
                return atSwitch ? "dropped at the switch" : "sent unclassified to " + runsOn(c)
                        + ", classified in software and dropped";
            case SWITCH:
                return "handled at the switch: " + c.operations();
            default:
                return (atSwitch ? "tagged " + classTag(c.tag(), c.classId()) + " at the switch to " + runsOn(c)
                        : "sent unclassified to " + runsOn(c) + ", classified in software") + ": " + c.operations();
        }
    }

    /** One switch rule: "of:0000000000000001 prio 1002: ETH_TYPE:ipv4, UDP_DST:5000 -> OUTPUT:2". */
    public static String rule(FlowRule f) {
        return f.deviceId() + " prio " + f.priority() + ": " + selector(f) + " -> " + treatment(f);
    }

    /** The rules an entry became, one per line, or why there are none. */
    public static String rules(TrafficClassInfo.Entry e) {
        if (e.rules().isEmpty()) {
            return e.classification() == Classification.SWITCH ? "none installed"
                    : "none of its own (reaches software through an earlier punt or the catch-all)";
        }
        return e.rules().stream().map(MetronText::rule).collect(Collectors.joining("\n"));
    }

    /** A rule's match, criteria comma-separated. */
    public static String selector(FlowRule f) {
        return f.selector().criteria().stream().map(Object::toString).collect(Collectors.joining(", "));
    }

    /** A rule's actions, comma-separated; a rule without any drops. */
    public static String treatment(FlowRule f) {
        List<Instruction> all = f.treatment().allInstructions();
        if (all.isEmpty() || all.stream().allMatch(i -> i.type() == Instruction.Type.NOACTION)) {
            return "drop";
        }
        return all.stream().map(Object::toString).collect(Collectors.joining(", "));
    }

    /** A NIC's tag types ("mac, vlan"), or {@link #NONE}. */
    public static String tagTypes(NicDispatch d) {
        return d.tagTypes().isEmpty() ? NONE : String.join(", ", d.tagTypes());
    }

    /** The modes a NIC's probe found possible, best first, or {@link #NONE}. */
    public static String possibleModes(NicDispatch d) {
        return d.possible().isEmpty() ? NONE : String.join(", ", d.possible());
    }

    /** The modes refused with why, or {@link #NONE}. */
    public static String refusals(NicDispatch d) {
        return d.refusals().isEmpty() ? NONE : d.refusalSummary();
    }

    /** What a core is used for. */
    public static String coreUse(ServerInfo.CoreInfo c) {
        return c.pipeline().isEmpty() ? c.available() ? "free" : "reserved" : c.pipeline();
    }
}
