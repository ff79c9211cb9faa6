package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.DrainReport;
import org.metron.app.api.DrainService;
import org.onosproject.net.DeviceId;

/**
 * Drains a server for planned work, or undrains it (docs/failover.md#planned-restart-drain): a thin shell over
 * {@link DrainService}, as {@code POST /onos/metron/servers/{id}/drain} and {@code .../undrain} are.
 */
@Service
@Command(scope = "onos", name = "metron-drain", description = "Drains a Metron server (its chains and groups move "
        + "to other servers hitless; nothing is placed on it), or undrains it with --undo")
public class DrainCommand extends MetronCommand {
    @Argument(index = 0, name = "server", description = "server device id, e.g. metron:srv1", required = true)
    String server;

    @Option(name = "--undo", description = "undrain: the server takes chains again")
    boolean undo;

    @Option(name = "--move-back", description = "with --undo: the chains the drain moved off come back to it")
    boolean moveBack;

    private DrainService drains;

    /** For hosts without OSGi (tests): the drain service to use. */
    public void setDrains(DrainService drains) {
        this.drains = drains;
    }

    @Override
    protected void run() {
        DrainService d = drains != null ? drains : get(DrainService.class);
        DrainReport r = undo ? d.undrain(DeviceId.deviceId(server), moveBack) : d.drain(DeviceId.deviceId(server));
        if (outputJson()) {
            print("%s", jsonForEntity(r, DrainReport.class));
            return;
        }
        print("server=%s drained=%s moves=%d", r.server(), r.drained(), r.moves().size());
        for (DrainReport.Move m : r.moves()) {
            print("    chain=%s %s from=%s to=%s: %s", m.chain().name(), m.what(), m.from(), m.to(), m.detail());
        }
    }
}
