package org.metron.app.impl;

import org.junit.Test;
import org.metron.synth.IpPrefix;

import static org.junit.Assert.assertEquals;

/** Synthesizer prefixes become the ONOS prefixes their text names, built from the address bits. */
public class OffloadRuleTranslatorTest {
    @Test
    public void prefixesMatchTheirTextForBothFamiliesAndEveryAddressRange() {
        for (String text : new String[]{"0.0.0.0/0", "10.1.2.3/32", "10.0.0.0/8", "128.0.0.0/1", "255.255.255.255/32",
                "192.0.2.128/25", "::/0", "2001:db8::1/128", "2001:db8::/32", "ffff:ffff::/32", "8000::/1",
                "fe80::1:2:3:4/64"}) {
            IpPrefix p = IpPrefix.parse(text);
            assertEquals(text, org.onlab.packet.IpPrefix.valueOf(p.toString()), OffloadRuleTranslator.prefix(p));
        }
    }
}
