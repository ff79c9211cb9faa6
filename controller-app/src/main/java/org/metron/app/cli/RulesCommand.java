package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.RuleInfo;
import org.metron.app.rest.MetronText;
import org.onosproject.cli.net.DeviceIdCompleter;
import org.onosproject.net.DeviceId;

/** Switch rules Metron installed, per device, with counters. */
@Service
@Command(scope = "onos", name = "metron-rules", description = "Lists switch rules Metron installed")
public class RulesCommand extends MetronCommand {
    @Argument(index = 0, name = "device", description = "device id (all when absent)")
    @Completion(DeviceIdCompleter.class)
    String device = null;

    @Override
    protected void run() {
        for (RuleInfo r : metron().rules(device == null ? null : DeviceId.deviceId(device))) {
            if (outputJson()) {
                print("%s", jsonForEntity(r, RuleInfo.class));
            } else {
                print("device=%s chain=%s role=%s priority=%d packets=%s bytes=%s match=[%s] actions=[%s]",
                        r.rule().deviceId(), r.chainId(), r.role(), r.rule().priority(), MetronText.counter(r.packets()),
                        MetronText.counter(r.bytes()), MetronText.selector(r.rule()), MetronText.treatment(r.rule()));
            }
        }
    }
}
