package org.metron.synth;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.Test;
import org.metron.synth.cli.MetronSynth;
import org.metron.synth.json.JsonText;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** metron-synth on a corpus chain: files written, their content consistent with the API, summary printed. */
public class CliTest {
    @Test
    public void writesClassesRulesAndGroupConfigs() throws Exception {
        Path dir = Files.createTempDirectory("metron-synth");
        Path chain = Paths.get(System.getProperty("basedir", "."), "corpus", "acl-napt.json");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc = MetronSynth.run(new String[] {chain.toString(), "--target", "p4_tagger", "-o", dir.toString(),
            "--check", "2000"}, new PrintStream(out, true, "UTF-8"), System.err);
        String text = out.toString("UTF-8");
        assertEquals(text, 0, rc);
        CompiledChain c = Synthesizer.compile(ChainSpec.fromJson(new String(Files.readAllBytes(chain),
                StandardCharsets.UTF_8)), TargetProfile.P4_TAGGER);
        assertTrue(text, text.startsWith("acl-napt on P4_TAGGER: " + c.classes().size() + " traffic classes"));
        assertTrue(text, text.contains("equivalence: 2000 packets"));
        assertTrue(text, text.contains(", 0 mismatches"));
        JsonNode classes = JsonText.read(Files.readString(dir.resolve("classes.json")));
        assertEquals(c.classes().size(), classes.get("classes").size());
        JsonNode rules = JsonText.read(Files.readString(dir.resolve("rules.json")));
        assertEquals(c.offloadRules().size(), rules.get("rules").size());
        // each rule names the filter entry it came from, as the API does
        for (int k = 0; k < c.offloadRules().size(); k++) {
            OffloadRule r = c.offloadRules().get(k);
            JsonNode from = rules.get("rules").get(k).path("from");
            assertEquals(r.toString(), r.sourceClass() == OffloadRule.NO_SOURCE ? -1 : r.sourceClass(),
                    from.path("class").asInt(-1));
            assertEquals(r.toString(), r.sourceEntry(), from.path("entry").asInt(OffloadRule.NO_SOURCE));
        }
        for (ClassGroup g : c.groups()) {
            assertEquals(g.clickConfig(), new String(Files.readAllBytes(dir.resolve("group-" + g.id() + ".click")),
                    StandardCharsets.UTF_8));
        }
    }

    @Test
    public void replyRulesAreWrittenForAChainWithReplies() throws Exception {
        Path dir = Files.createTempDirectory("metron-synth");
        Path chain = Paths.get(System.getProperty("basedir", "."), "corpus", "fw500-napt-lb-replies.json");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc = MetronSynth.run(new String[] {chain.toString(), "--target", "OPENFLOW13", "-o", dir.toString(),
            "--check", "2000"}, new PrintStream(out, true, "UTF-8"), System.err);
        String text = out.toString("UTF-8");
        assertEquals(text, 0, rc);
        CompiledChain c = Synthesizer.compile(ChainSpec.fromJson(new String(Files.readAllBytes(chain),
                StandardCharsets.UTF_8)), TargetProfile.OPENFLOW13);
        assertTrue(text, text.contains("(" + c.replyRules().size() + " for replies)"));
        assertTrue(text, text.contains("2000 replies ("));
        JsonNode rules = JsonText.read(Files.readString(dir.resolve("rules.json")));
        assertEquals(c.offloadRules().size(), rules.get("rules").size());
        assertEquals(c.replyRules().size(), rules.get("replyRules").size());
        assertTrue(c.replyRules().size() > 0);
    }

    @Test
    public void classifierVectorsGiveEveryNamedClassifiersOutputPerPacket() throws Exception {
        Path dir = Files.createTempDirectory("metron-synth");
        Path chain = Paths.get(System.getProperty("basedir", "."), "corpus", "fw500-napt-lb-replies.json");
        assertEquals(0, MetronSynth.run(new String[] {chain.toString(), "--target", "NONE", "-o", dir.toString(),
            "--classifier-vectors", "3000", "--seed", "5"}, new PrintStream(new ByteArrayOutputStream(), true,
                "UTF-8"), System.err));
        List<String> lines = Files.readAllLines(dir.resolve("classifier-vectors.tsv"));
        assertEquals(3001, lines.size());
        List<String> head = List.of(lines.get(0).split("\t"));
        assertEquals(List.of("family", "src", "dst", "proto", "sport", "dport", "tcpflags", "ttl", "tos", "mf",
                "offset", "icmp", "g0.sw", "g0.swr", "nf.fw.fw", "nf.napt.fam", "nf.napt.rfam", "nf.lb.rweb",
                "nf.lb.web"), head);
        int fam = head.indexOf("nf.napt.fam");
        int sw = head.indexOf("g0.sw");
        java.util.Set<String> swOutputs = new java.util.HashSet<>();
        int v6 = 0;
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split("\t");
            // fam :: IPClassifier(ip vers 4, ip vers 6): the family column decides it on its own
            assertEquals(line, f[0].equals("6") ? "1" : "0", f[fam]);
            assertTrue(line, !(f[0].equals("6") && f[3].equals("44")));
            v6 += f[0].equals("6") ? 1 : 0;
            swOutputs.add(f[sw]);
        }
        assertTrue("IPv6 packets: " + v6, v6 > 300 && v6 < 2700);
        assertTrue("sw outputs reached: " + swOutputs.size(), swOutputs.size() > 100);
    }

    @Test
    public void usageErrorsExit64() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(64, MetronSynth.run(new String[] {"a.json", "--target"}, System.out,
                new PrintStream(err, true, "UTF-8")));
        assertTrue(err.toString("UTF-8").contains("option --target needs a value"));
        assertEquals(2, MetronSynth.run(new String[] {Paths.get(System.getProperty("basedir", "."), "corpus",
            "acl-napt.json").toString(), "--target", "TOFINO", "-o", Files.createTempDirectory("x").toString()},
                System.out, new PrintStream(err, true, "UTF-8")));
        assertTrue(err.toString("UTF-8").contains("unknown target profile 'TOFINO'"));
    }
}
