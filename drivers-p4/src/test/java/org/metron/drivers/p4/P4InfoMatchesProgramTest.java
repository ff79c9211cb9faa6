package org.metron.drivers.p4;

import org.junit.Test;
import p4.config.v1.P4InfoOuterClass;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;

/**
 * p4info.txt is hand-written (no p4c here): check it against metron_tagger.p4's table keys, match kinds,
 * actions, parameter names and widths, so the two cannot drift apart silently.
 */
public class P4InfoMatchesProgramTest {

    private static String source() throws IOException {
        try (InputStream in = P4InfoMatchesProgramTest.class.getResourceAsStream(MetronTaggerPipeconf.P4_SOURCE)) {
            assertNotNull(in);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    public void tableKeysAndActionsAgree() throws IOException {
        String p4 = source();
        P4InfoOuterClass.P4Info info = P4RuntimeEncoder.taggerP4Info();

        Map<String, Integer> types = new HashMap<>();
        Matcher td = Pattern.compile("typedef\\s+bit<(\\d+)>\\s+(\\w+);").matcher(p4);
        while (td.find()) {
            types.put(td.group(2), Integer.parseInt(td.group(1)));
        }

        Matcher keyBlock = Pattern.compile("key\\s*=\\s*\\{(.*?)\\}", Pattern.DOTALL).matcher(p4);
        keyBlock.find();
        Map<String, String> keys = new LinkedHashMap<>();
        Matcher k = Pattern.compile(":\\s*(\\w+)\\s+@name\\(\"(\\w+)\"\\)").matcher(keyBlock.group(1));
        while (k.find()) {
            keys.put(k.group(2), k.group(1).toUpperCase());
        }
        P4InfoOuterClass.Table table = info.getTables(0);
        assertEquals("TaggerIngress.tagger", table.getPreamble().getName());
        Map<String, String> infoKeys = new LinkedHashMap<>();
        table.getMatchFieldsList().forEach(f -> infoKeys.put(f.getName(), f.getMatchType().name()));
        assertEquals(keys, infoKeys);

        Matcher size = Pattern.compile("size\\s*=\\s*(\\d+);").matcher(p4);
        size.find();
        assertEquals(Long.parseLong(size.group(1)), table.getSize());

        Map<String, Map<String, Integer>> actions = new LinkedHashMap<>();
        Matcher a = Pattern.compile("action\\s+(\\w+)\\(([^)]*)\\)").matcher(p4);
        while (a.find()) {
            Map<String, Integer> params = new LinkedHashMap<>();
            for (String p : a.group(2).split(",")) {
                if (p.isBlank()) {
                    continue;
                }
                String[] tn = p.trim().split("\\s+");
                Matcher bit = Pattern.compile("bit<(\\d+)>").matcher(tn[0]);
                params.put(tn[1], bit.matches() ? Integer.parseInt(bit.group(1)) : types.get(tn[0]));
            }
            actions.put("TaggerIngress." + a.group(1), params);
        }
        Map<String, Map<String, Integer>> infoActions = new LinkedHashMap<>();
        for (P4InfoOuterClass.Action act : info.getActionsList()) {
            Map<String, Integer> params = new LinkedHashMap<>();
            act.getParamsList().forEach(p -> params.put(p.getName(), p.getBitwidth()));
            infoActions.put(act.getPreamble().getName(), params);
        }
        assertEquals(actions, infoActions);
        assertEquals(actions.size(), table.getActionRefsCount());
    }
}
