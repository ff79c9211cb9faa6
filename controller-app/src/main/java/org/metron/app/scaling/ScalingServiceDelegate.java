package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.impl.ServerLoss;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link ScalingService} forwarded to the running manager (an OSGi component is created before it starts). */
public abstract class ScalingServiceDelegate implements ScalingService, ServerLoss {
    private volatile ScalingManager manager;

    /** Sets the manager; answers the previous one. */
    protected ScalingManager delegate(ScalingManager m) {
        ScalingManager old = manager;
        manager = m;
        return old;
    }

    private ScalingManager m() {
        ScalingManager m = manager;
        if (m == null) {
            throw new MetronException(Fault.INTERNAL, "scaling is not running (component not active)");
        }
        return m;
    }

    /** Nothing to bring back while scaling is not running (what it scaled out stays placed). */
    @Override
    public List<ChainId> serverLost(DeviceId server) {
        ScalingManager m = manager;
        return m == null ? List.of() : m.serverLost(server);
    }

    @Override
    public List<ScalingEvent> history(ChainId chain) {
        return m().history(chain);
    }

    @Override
    public Map<ChainId, List<ScalingEvent>> history() {
        return m().history();
    }

    @Override
    public List<FlowStateAlert> flowStateAlerts(ChainId chain) {
        return m().flowStateAlerts(chain);
    }

    @Override
    public List<FlowStateAlert> flowStateAlerts() {
        return m().flowStateAlerts();
    }

    @Override
    public List<BlackBoxStatus> blackBoxes(ChainId chain) {
        return m().blackBoxes(chain);
    }

    @Override
    public List<BlackBoxStatus> blackBoxes() {
        return m().blackBoxes();
    }

    @Override
    public Optional<ChainLoad> load(ChainId chain) {
        return m().load(chain);
    }

    @Override
    public Optional<Double> ingressPps(ChainId chain) {
        return m().ingressPps(chain);
    }

    @Override
    public Collection<ScalingOperation> inProgress() {
        return m().inProgress();
    }

    @Override
    public ScalingEvent split(ChainId chain, String group) {
        return m().split(chain, group);
    }

    @Override
    public ScalingEvent merge(ChainId chain, String keep, String retire) {
        return m().merge(chain, keep, retire);
    }

    @Override
    public DrainReport.Move move(ChainId chain, Optional<DeviceId> to, String why) {
        return m().move(chain, to, why);
    }
}
