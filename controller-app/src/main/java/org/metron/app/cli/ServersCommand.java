package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.ServerInfo;
import org.metron.app.rest.MetronText;
import org.metron.drivers.server.NicDispatch;

import java.util.stream.Collectors;

/**
 * Servers with per-core load and per-NIC dispatch as their agents report them now; then each server netcfg entry
 * ONOS refused (device, field, reason, when).
 */
@Service
@Command(scope = "onos", name = "metron-servers", description = "Lists Metron servers with per-core load and how each NIC dispatches, and refused server netcfg entries")
public class ServersCommand extends MetronCommand {
    @Override
    protected void run() {
        for (ServerInfo s : metron().servers()) {
            if (outputJson()) {
                print("%s", jsonForEntity(s, ServerInfo.class));
            } else if (!s.reachable()) {
                print("id=%s agent=%s%s UNREACHABLE: %s", s.id(), s.agent(),
                        s.drainedSinceMs().isPresent() ? " DRAINED" : "", s.error());
            } else {
                print("id=%s agent=%s%s load=%s freeCores=%d nics=%s", s.id(), s.agent(),
                        s.drainedSinceMs().isPresent() ? " DRAINED since " + java.time.Instant.ofEpochMilli(
                                s.drainedSinceMs().getAsLong()) : "", MetronText.percent(s.load()), s.freeCores(),
                        s.nics().stream().map(n -> n.name() + (n.linkUp() ? "" : "(down)"))
                                .collect(Collectors.joining(",")));
                for (ServerInfo.NicInfo n : s.nics()) {
                    NicDispatch d = n.dispatch();
                    print("    nic=%s dispatch=%s tags=%s possible=%s capabilities=%s refused=%s", n.name(),
                            d.summary(), MetronText.tagTypes(d), MetronText.possibleModes(d), d.capabilitySummary(),
                            MetronText.refusals(d));
                }
                for (ServerInfo.CoreInfo c : s.cores()) {
                    print("    core=%d load=%s %s", c.id(), MetronText.percent(c.load()),
                            c.pipeline().isEmpty() ? MetronText.coreUse(c) : "chain=" + c.pipeline());
                }
            }
        }
        for (ServerConfigErrors.Refused r : metron().refusedServerConfigs()) {
            if (outputJson()) {
                print("%s", jsonForEntity(r, ServerConfigErrors.Refused.class));
            } else {
                print("id=%s NETCFG REFUSED %s", r.device(), MetronText.refused(r));
            }
        }
    }
}
