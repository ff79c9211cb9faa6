package org.metron.synth.click;

import org.junit.Test;
import org.metron.synth.SynthesisException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * Runs the shared parser vectors in tests/click-vectors (the C++ agent runs the same files).
 * {@code -Dvectors.write=true} writes missing .expect files from the current parser, for review before commit.
 */
public class ClickVectorsTest {
    static final Path DIR = Paths.get(System.getProperty("basedir", "."), "..", "tests", "click-vectors");

    static String run(String text) {
        try {
            return ClickParser.parse(text).summary();
        } catch (SynthesisException e) {
            return "error " + e.line() + ":" + e.column() + ": " + e.reason() + "\n";
        }
    }

    @Test
    public void everyVectorMatches() throws IOException {
        List<Path> cases;
        try (Stream<Path> s = Files.list(DIR)) {
            cases = s.filter(p -> p.toString().endsWith(".click")).sorted().collect(Collectors.toList());
        }
        assertTrue("no vectors in " + DIR, cases.size() >= 20);
        boolean write = Boolean.getBoolean("vectors.write");
        for (Path c : cases) {
            String actual = run(new String(Files.readAllBytes(c), StandardCharsets.UTF_8));
            Path exp = Paths.get(c.toString().replaceAll("\\.click$", ".expect"));
            if (write && !Files.exists(exp)) {
                Files.write(exp, actual.getBytes(StandardCharsets.UTF_8));
            }
            String expected = new String(Files.readAllBytes(exp), StandardCharsets.UTF_8);
            assertEquals(c.getFileName().toString(), expected, actual);
            boolean errorCase = c.getFileName().toString().startsWith("e");
            assertEquals(c.getFileName() + ": e* vectors are errors, others parse", errorCase,
                    actual.startsWith("error "));
        }
    }
}
