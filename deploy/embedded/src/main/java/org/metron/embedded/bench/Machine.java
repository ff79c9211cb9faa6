package org.metron.embedded.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

/** The "machine" field of benchmark results: CPU model, cores, memory. */
final class Machine {
    private Machine() {
    }

    static String describe() {
        String cpu = "unknown CPU";
        try {
            cpu = Files.readAllLines(Paths.get("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.replaceAll(".*:\\s*", "")).orElse(cpu);
        } catch (IOException e) {
            // keep the placeholder: the field is descriptive only
        }
        long memGb = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalPhysicalMemorySize() >> 30;
        return String.format("%s, %d cores, %d GB", cpu.replace("\"", ""), Runtime.getRuntime().availableProcessors(),
                             memGb);
    }
}
