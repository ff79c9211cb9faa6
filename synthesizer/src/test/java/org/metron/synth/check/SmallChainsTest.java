package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainLink;
import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.Deployment;
import org.metron.synth.InterfaceRef;
import org.metron.synth.NfSpec;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

/** Small hand-written chains, every target, differential check. */
public class SmallChainsTest {
    static final String FW = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> f :: IPFilter(\n"
            + "  deny src net 10.1.0.0/16 and dst port 22,\n"
            + "  allow tcp dst port 80 or dst port 443,\n"
            + "  allow udp and not src port 1024-2048,\n"
            + "  allow src net 2001:db8::/32 and icmp type echo,\n"
            + "  deny all) -> Unstrip(14) -> ToDevice(out0);";
    static final String NAPT = "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
            + "  -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)\n"
            + "  -> Unstrip(14) -> ToDevice(out0);";
    static final String LB = "rr :: RoundRobinIPMapper(- - 10.0.0.1 8080 0 1, - - 10.0.0.2 8080 0 1,"
            + " - - 10.0.0.3 8080 0 1);\n"
            + "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(tcp dst port 80, -);\n"
            + "c[0] -> lb :: IPRewriter(rr, drop) -> DecIPTTL -> Unstrip(14) -> ToDevice(out0);\n"
            + "c[1] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02) -> ToDevice(out0);";

    static ChainSpec chain(String name, String... nfClicks) {
        List<NfSpec> nfs = new ArrayList<>();
        List<ChainLink> links = new ArrayList<>();
        for (int i = 0; i < nfClicks.length; i++) {
            nfs.add(NfSpec.of("nf" + i, nfClicks[i]));
            if (i > 0) {
                links.add(ChainLink.of(InterfaceRef.of("nf" + (i - 1), "out0"), InterfaceRef.of("nf" + i, "in0")));
            }
        }
        return new ChainSpec(name, nfs, links, List.of(InterfaceRef.of("nf0", "in0")),
                List.of(InterfaceRef.of("nf" + (nfClicks.length - 1), "out0")), Deployment.DEFAULT);
    }

    static void check(ChainSpec c, long packets) {
        for (TargetProfile t : new TargetProfile[] {TargetProfile.OPENFLOW13, TargetProfile.P4_TAGGER,
                TargetProfile.NIC_RTE_FLOW, TargetProfile.NONE}) {
            CompiledChain out = Synthesizer.compile(c, t);
            EquivalenceChecker.Report r = new EquivalenceChecker(c, out, 42).run(packets);
            assertNull(c.name() + " on " + t + ": " + r, r.firstMismatch);
            assertEquals(0, r.mismatches);
        }
    }

    @Test
    public void firewallAlone() {
        check(chain("fw", FW), 20000);
    }

    @Test
    public void firewallNaptLb() {
        check(chain("fw-napt-lb", FW, NAPT, LB), 20000);
    }
}
