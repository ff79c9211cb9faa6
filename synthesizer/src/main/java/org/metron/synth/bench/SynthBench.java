package org.metron.synth.bench;

import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.core.ChainModel;
import org.metron.synth.corpus.CorpusGenerator;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * {@code make bench} figures for the synthesizer: median time and peak heap to synthesize + split + compile
 * FW(n) -> NAPT -> LB for OpenFlow 1.3 (n = 250..4000), each measured side by side with the naive pairwise
 * product ({@link NaiveProduct}) of the same chain in the same JVM. Times are medians of warm runs (after
 * warm-up), each including Click parsing of the whole chain. The curve is the thread's CPU time (the
 * development machine is shared, and wall time there mostly measures other people's builds); for 4000 rules
 * the wall-clock median is a figure of its own, printed with the load average; the cold first run is printed.
 */
public final class SynthBench {
    /** Warm-up runs: the controller synthesizes in a long-lived JVM, so the figure is after JIT settles. */
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int WARMUP = SMOKE ? 1 : 20;
    private static final int RUNS = SMOKE ? 1 : 15;

    private SynthBench() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "bench/results");
        String machine = args.length > 1 ? args[1] : "unknown";
        Files.createDirectories(out);
        int[] sizes = SMOKE ? new int[]{250, 4000} : new int[]{250, 500, 1000, 2000, 4000};
        double[] ours = new double[sizes.length];
        for (int k = 0; k < sizes.length; k++) {
            int n = sizes[k];
            ChainSpec chain = CorpusGenerator.fwNaptLb(n, 11);
            long cold = System.nanoTime();
            CompiledChain c = Synthesizer.compile(chain, TargetProfile.OPENFLOW13);
            double coldMs = (System.nanoTime() - cold) / 1e6;
            double mine = median(() -> Synthesizer.compile(chain, TargetProfile.OPENFLOW13));
            double mineWall = lastWall;
            double base = median(() -> NaiveProduct.classes(new ChainModel(chain)));
            double baseWall = lastWall;
            ours[k] = mine;
            int naive = NaiveProduct.classes(new ChainModel(chain));
            System.out.printf(Locale.ROOT, "FW(%d)->NAPT->LB: %.2f ms CPU median (wall %.1f ms, cold %.1f ms), "
                    + "%d classes, %d entries, %d rules; naive product %.2f ms CPU (wall %.1f ms), %d combinations%n",
                    n, mine, mineWall, coldMs, c.classes().size(), c.stats().entries(), c.stats().rulesOffloaded(),
                    base, baseWall, naive);
            write(out, String.format(Locale.ROOT, "synth_curve_fw%04d_napt_lb_ms", n), mine, "ms_cpu",
                    "naive pairwise product", base, machine);
            if (n == 4000) {
                write(out, "synth_fw4000_napt_lb_ms", mine, "ms_cpu", "naive pairwise product", base, machine);
                // wall time too: the target is wall time; on a shared machine it carries others' load, so the
                // load average at the run is printed with it
                write(out, "synth_fw4000_napt_lb_wall_ms", mineWall, "ms_wall", "naive pairwise product", baseWall,
                        machine);
                System.out.printf(Locale.ROOT, "load average during the run: %.2f%n",
                        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                double heap = peakHeapMb(() -> Synthesizer.compile(chain, TargetProfile.OPENFLOW13));
                double baseHeap = peakHeapMb(() -> NaiveProduct.classes(new ChainModel(chain)));
                System.out.printf(Locale.ROOT, "peak heap: %.1f MB (naive product %.1f MB)%n", heap, baseHeap);
                write(out, "synth_fw4000_napt_lb_peak_heap_mb", heap, "MB", "naive pairwise product", baseHeap,
                        machine);
            }
        }
        double slope = Math.log(ours[sizes.length - 1] / ours[0]) / Math.log((double) sizes[sizes.length - 1] / sizes[0]);
        System.out.printf(Locale.ROOT, "growth exponent 250->4000: %.2f (1.0 = linear, n log n ~ 1.2)%n", slope);
    }

    private static double lastWall;

    /** Median thread CPU time in ms (the median wall time is left in lastWall). */
    private static double median(Supplier<?> run) {
        for (int i = 0; i < WARMUP; i++) {
            run.get();
        }
        java.lang.management.ThreadMXBean tb = ManagementFactory.getThreadMXBean();
        double[] cpu = new double[RUNS];
        double[] wall = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            long c0 = tb.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            run.get();
            wall[i] = (System.nanoTime() - t0) / 1e6;
            cpu[i] = (tb.getCurrentThreadCpuTime() - c0) / 1e6;
        }
        Arrays.sort(cpu);
        Arrays.sort(wall);
        lastWall = wall[RUNS / 2];
        return cpu[RUNS / 2];
    }

    /** Peak heap in use while the task runs once, after a GC (includes what was live before). */
    private static double peakHeapMb(Supplier<?> run) {
        System.gc();
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                p.resetPeakUsage();
            }
        }
        run.get();
        long peak = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                peak += p.getPeakUsage().getUsed();
            }
        }
        return peak / 1048576.0;
    }

    private static void write(Path dir, String name, double value, String unit, String baseline, double baseValue,
                              String machine) throws IOException {
        String json = String.format(Locale.ROOT, "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"%s\", \"baseline\": "
                + "\"%s\", \"baseline_value\": %.3f, \"ratio\": %.3f, \"machine\": \"%s\"}%n", name, value, unit,
                baseline, baseValue, value / baseValue, machine.replace("\"", ""));
        Files.write(dir.resolve(name + ".json"), json.getBytes(StandardCharsets.UTF_8));
    }
}
