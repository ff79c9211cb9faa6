package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.rest.MetronText;

import java.util.Optional;

/** Removes a chain and everything it installed. */
@Service
@Command(scope = "onos", name = "metron-chain-remove", description = "Removes a Metron chain")
public class ChainRemoveCommand extends MetronCommand {
    @Argument(index = 0, name = "name", description = "chain name", required = true)
    @Completion(ChainNameCompleter.class)
    String name = null;

    @Override
    protected void run() {
        Optional<Chain> left = metron().remove(ChainId.of(name));
        if (left.isEmpty()) {
            print("chain %s removed", name);
        } else {
            // the delete stands: what is left goes when its device answers again
            print("chain %s deleted, not removed yet (state=%s): left %s", name, left.get().state(),
                    MetronText.pending(left.get().pending()));
        }
    }
}
