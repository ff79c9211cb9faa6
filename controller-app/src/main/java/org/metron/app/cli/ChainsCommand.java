package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.Chain;
import org.metron.app.rest.MetronText;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/** Lists chains with their lifecycle state and their black-box NFs (docs/blackbox.md), one line each. */
@Service
@Command(scope = "onos", name = "metron-chains", description = "Lists Metron service chains and their state")
public class ChainsCommand extends MetronCommand {

    @Override
    protected void run() {
        for (Chain c : metron().chains()) {
            if (outputJson()) {
                print("%s", jsonForEntity(c, Chain.class));
            } else {
                print("name=%s state=%s ingress=%s egress=%s tagType=%s cores=%d%s%s", c.id(), c.state(),
                        ingress(c.deployment()), egress(c.deployment()), c.deployment().tagType(),
                        c.deployment().cpuCores(), c.pending().isEmpty() ? "" : " pending="
                                + MetronText.pending(c.pending()), c.reason().isEmpty() ? "" : " reason=" + c.reason());
                scaling().blackBoxes(c.id()).forEach(b -> print("    %s", MetronText.blackBox(b)));
            }
        }
    }
}
