package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.ChainId;

/** Removes a chain and everything it installed. */
@Service
@Command(scope = "onos", name = "metron-chain-remove", description = "Removes a Metron chain")
public class ChainRemoveCommand extends MetronCommand {
    @Argument(index = 0, name = "name", description = "chain name", required = true)
    @Completion(ChainNameCompleter.class)
    String name = null;

    @Override
    protected void run() {
        metron().remove(ChainId.of(name));
        print("chain %s removed", name);
    }
}
