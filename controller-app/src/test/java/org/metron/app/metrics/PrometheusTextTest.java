package org.metron.app.metrics;

import org.junit.Test;
import org.metron.app.metrics.PrometheusText.Type;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The exposition format: HELP/TYPE once per family and first, counters vs gauges, escaping, refusals. */
public class PrometheusTextTest {

    @Test
    public void familiesComeOnceWithHelpAndTypeBeforeTheirSamples() {
        PrometheusText t = new PrometheusText()
                .family("metron_a_total", Type.COUNTER, "A counter.")
                .family("metron_b", Type.GAUGE, "A gauge.");
        t.sample("metron_a_total", 3, "chain", "x");
        t.sample("metron_b", 0.25);
        t.sample("metron_a_total", 4, "chain", "y");  // joins its family, not a second block
        assertEquals("# HELP metron_a_total A counter.\n"
                + "# TYPE metron_a_total counter\n"
                + "metron_a_total{chain=\"x\"} 3\n"
                + "metron_a_total{chain=\"y\"} 4\n"
                + "# HELP metron_b A gauge.\n"
                + "# TYPE metron_b gauge\n"
                + "metron_b 0.25\n", t.text());
    }

    @Test
    public void labelValuesAndHelpAreEscaped() {
        PrometheusText t = new PrometheusText().family("m", Type.GAUGE, "line1\nback\\slash \"quoted\"");
        t.sample("m", 1, "chain", "a\"b\\c\nd");
        assertEquals("# HELP m line1\\nback\\\\slash \"quoted\"\n# TYPE m gauge\nm{chain=\"a\\\"b\\\\c\\nd\"} 1\n",
                t.text());
    }

    @Test
    public void numbersAsTheFormatSpellsThem() {
        assertEquals("12345678901", PrometheusText.format(12345678901d));
        assertEquals("0.5", PrometheusText.format(0.5));
        assertEquals("NaN", PrometheusText.format(Double.NaN));
        assertEquals("+Inf", PrometheusText.format(Double.POSITIVE_INFINITY));
        assertEquals("1.7000000005E9", PrometheusText.format(1.7e9 + 0.5));  // Go's ParseFloat reads it
    }

    @Test
    public void emptyFamiliesAreLeftOut() {
        assertEquals("", new PrometheusText().family("m", Type.GAUGE, "h").text());
    }

    @Test
    public void badNamesTypesAndLabelsAreRefusedNamingThem() {
        PrometheusText t = new PrometheusText();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.family("metron_packets", Type.COUNTER, "h"))
                .getMessage().contains("'metron_packets' must be named *_total"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.family("9bad", Type.GAUGE, "h"))
                .getMessage().contains("'9bad'"));
        t.family("m", Type.GAUGE, "h");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.family("m", Type.COUNTER, "h"))
                .getMessage().contains("'m'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.sample("m", 1, "bad-label", "v"))
                .getMessage().contains("'bad-label'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.sample("m", 1, "chain"))
                .getMessage().contains("pairs"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.sample("other", 1))
                .getMessage().contains("'other' not declared"));
    }
}
