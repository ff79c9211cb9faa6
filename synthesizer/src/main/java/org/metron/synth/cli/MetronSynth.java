package org.metron.synth.cli;

import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.SynthesisException;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.check.EquivalenceChecker;
import org.metron.synth.json.CompiledChainJson;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * {@code metron-synth CHAIN.json [--target PROFILE] [--capacity N] [-o DIR] [--check PACKETS]
 * [--classifier-vectors PACKETS] [--seed S]}: synthesizes a chain, writes classes.json, rules.json and one
 * group-K.click per class group into DIR (default {@code ./NAME.synth}), and prints a summary;
 * {@code --classifier-vectors} also writes classifier-vectors.tsv ({@link ClassifierVectors}). {@code --frames},
 * {@code --expect} and {@code --compare} are the real-data-plane checker's modes ({@link RealCheck}). Bad input
 * prints one error line (NF, element, line:col) and exits 2; bad usage exits 64.
 */
public final class MetronSynth {
    static final String USAGE = "usage: metron-synth CHAIN.json [--target OPENFLOW13|P4_TAGGER|NIC_RTE_FLOW|NONE]"
            + " [--capacity N] [-o DIR] [--check PACKETS] [--classifier-vectors PACKETS] [--seed S]\n"
            + "       metron-synth CHAIN.json --frames N [--seed S] [--pps R] --pcap IN.pcap\n"
            + "       metron-synth CHAIN.json --expect IN.pcap -o EXPECTED.json [--egress-mac K=MAC]...\n"
            + "       metron-synth CHAIN.json --compare IN.pcap --capture K=FILE... [--retry K=FILE...]"
            + " [--egress-mac K=MAC]... [--report R.json] [--missing-pcap M.pcap] [--window W]\n"
            + "       metron-synth CHAIN.json --replies OUT.pcap --forward IN.pcap --capture K=FILE..."
            + " [--retry K=FILE...] -o EXPECTED.json [--egress-mac K=MAC]...\n"
            + "       metron-synth --compare-expected EXPECTED.json --inputs IN.pcap --capture K=FILE..."
            + " [--retry K=FILE...] [--report R.json] [--missing-pcap M.pcap]";

    private MetronSynth() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the CLI; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        String chainPath = null;
        String target = "OPENFLOW13";
        String dir = null;
        Integer capacity = null;
        long check = 0;
        long vectors = 0;
        long seed = 1;
        RealCheck.Options real = new RealCheck.Options();
        try {
            for (int i = 0; i < args.length; i++) {
                int nextArg = real.read(args, i);
                if (nextArg > 0) {
                    i = nextArg - 1;
                    continue;
                }
                switch (args[i]) {
                    case "--target":
                        target = value(args, ++i);
                        break;
                    case "-o":
                        dir = value(args, ++i);
                        break;
                    case "--capacity":
                        capacity = Integer.parseInt(value(args, ++i));
                        break;
                    case "--check":
                        check = Long.parseLong(value(args, ++i));
                        break;
                    case "--classifier-vectors":
                        vectors = Long.parseLong(value(args, ++i));
                        break;
                    case "--seed":
                        seed = Long.parseLong(value(args, ++i));
                        break;
                    case "-h": case "--help":
                        out.println(USAGE);
                        return 0;
                    default:
                        if (args[i].startsWith("-") || chainPath != null) {
                            throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
                        }
                        chainPath = args[i];
                }
            }
            if (chainPath == null && real.get("--compare-expected") == null) {
                throw new IllegalArgumentException("missing CHAIN.json");
            }
        } catch (IllegalArgumentException e) {
            err.println("metron-synth: " + e.getMessage() + "\n" + USAGE);
            return 64;
        }
        try {
            if (real.get("--compare-expected") != null) {
                return RealCheck.compareExpected(real, out);
            }
            String json = new String(Files.readAllBytes(Paths.get(chainPath)), StandardCharsets.UTF_8);
            ChainSpec chain = ChainSpec.fromJson(json);
            if (real.any()) {
                return RealCheck.run(chain, real, dir, seed, out);
            }
            TargetProfile t = TargetProfile.named(target);
            if (capacity != null) {
                t = t.withCapacity(capacity);
            }
            CompiledChain c = Synthesizer.compile(chain, t);
            Path d = Paths.get(dir != null ? dir : chain.name() + ".synth");
            Files.createDirectories(d);
            Files.write(d.resolve("classes.json"), CompiledChainJson.classes(c).getBytes(StandardCharsets.UTF_8));
            Files.write(d.resolve("rules.json"), CompiledChainJson.rules(c).getBytes(StandardCharsets.UTF_8));
            for (ClassGroup g : c.groups()) {
                Files.write(d.resolve("group-" + g.id() + ".click"), g.clickConfig().getBytes(StandardCharsets.UTF_8));
            }
            if (vectors > 0) {
                Files.write(d.resolve("classifier-vectors.tsv"),
                        ClassifierVectors.tsv(chain, c, vectors, seed).getBytes(StandardCharsets.UTF_8));
            }
            long stateful = c.classes().stream().filter(TrafficClass::stateful).count();
            out.printf("%s on %s: %d traffic classes (%d stateful), %d filter entries, %d rules offloaded%s, "
                    + "%d entries in software, %d groups%n", chain.name(), t.name(), c.classes().size(), stateful,
                    c.stats().entries(), c.stats().rulesOffloaded(), c.replyRules().isEmpty() ? ""
                            : " (" + c.replyRules().size() + " for replies)", c.stats().rulesSoftware(),
                    c.groups().size());
            StringBuilder ph = new StringBuilder();
            c.stats().phaseNanos().forEach((k, v) -> ph.append(String.format("%s %.1f ms, ", k, v / 1e6)));
            out.printf("time: %stotal %.1f ms%nwrote %s%n", ph, c.stats().totalNanos() / 1e6, d);
            if (check > 0) {
                EquivalenceChecker.Report r = new EquivalenceChecker(chain, c, seed).run(check);
                out.println("equivalence: " + r);
                return r.mismatches == 0 ? 0 : 3;
            }
            return 0;
        } catch (SynthesisException e) {
            err.println("metron-synth: error: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("metron-synth: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            return 1;
        } catch (IllegalArgumentException e) {
            err.println("metron-synth: " + e.getMessage() + "\n" + USAGE);
            return 64;
        }
    }

    static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException("option " + args[i - 1] + " needs a value");
        }
        return args[i];
    }
}
