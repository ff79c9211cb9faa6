package org.metron.app.cli;

import org.metron.app.api.MetronException;
import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.onosproject.cli.AbstractShellCommand;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/**
 * Base of Metron's commands: finds the service, runs the command, and prints a MetronException as one readable
 * error line (fault and what/where) instead of a stack trace.
 */
public abstract class MetronCommand extends AbstractShellCommand {
    private MetronService service;
    private ScalingService scaling;
    private CodecContext codecs;

    /** For hosts without OSGi (tests): the scaling service to use. */
    public void setScaling(ScalingService scaling) {
        this.scaling = scaling;
    }

    protected ScalingService scaling() {
        return scaling != null ? scaling : get(ScalingService.class);
    }

    /** For hosts without OSGi (tests, the embedded host's shell): the service to use. */
    public void setService(MetronService service) {
        this.service = service;
    }

    /** For hosts without OSGi (tests): the codecs --json output encodes with, and the services they ask for. */
    public void setCodecs(CodecContext codecs) {
        this.codecs = codecs;
    }

    @Override
    public <T> JsonCodec<T> codec(Class<T> type) {
        return codecs != null ? codecs.codec(type) : super.codec(type);
    }

    @Override
    public <T> T getService(Class<T> type) {
        return codecs != null ? codecs.getService(type) : super.getService(type);
    }

    protected MetronService metron() {
        return service != null ? service : get(MetronService.class);
    }

    @Override
    protected final void doExecute() throws Exception {
        try {
            run();
        } catch (MetronException e) {
            error("%s: %s", e.fault(), e.getMessage());
        }
    }

    /** The command's work; MetronExceptions are reported by the base. */
    protected abstract void run() throws Exception;
}
