package org.metron.app.scaling;

import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.testing.TestSwitches;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowRule;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Fails the next install on a device by throwing, as a controller that dies at that moment would stop. */
final class CrashingSwitches implements SwitchProgrammer {
    final TestSwitches real;
    volatile DeviceId crashOn;
    /** Installs on {@link #crashOn} that still succeed before the crash. */
    volatile int crashAfter;
    /** The install on {@link #crashOn} fails as a switch refusing a batch does, instead of crashing. */
    volatile boolean failInstead;
    /** Every removal fails, as on a switch whose master died with the previous owner. */
    volatile boolean refuseRemoves;

    CrashingSwitches(TestSwitches real) {
        this.real = real;
    }

    @Override
    public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
        if (device.equals(crashOn) && crashAfter-- <= 0) {
            crashOn = null;
            if (failInstead) {
                return CompletableFuture.failedFuture(new IllegalStateException(device + " refused the batch"));
            }
            throw new IllegalStateException("controller crashed while programming " + device);
        }
        return real.install(device, rules);
    }

    @Override
    public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
        if (refuseRemoves) {
            return CompletableFuture.failedFuture(new IllegalStateException("no master for " + device));
        }
        return real.remove(device, rules);
    }

    @Override
    public Collection<org.onosproject.net.flow.FlowEntry> entries(DeviceId device) {
        return real.entries(device);
    }

    @Override
    public int ruleCount(DeviceId device) {
        return real.ruleCount(device);
    }
}
