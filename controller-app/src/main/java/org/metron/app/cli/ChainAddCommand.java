package org.metron.app.cli;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.FileCompleter;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ValidationReport;
import org.metron.app.rest.MetronText;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Submits (or with --dry-run validates) a chain from a JSON file; the NF configs travel inside the JSON. */
@Service
@Command(scope = "onos", name = "metron-chain-add", description = "Submits a Metron chain from a JSON file")
public class ChainAddCommand extends MetronCommand {
    @Argument(index = 0, name = "file", description = "chain JSON (or original Metron netcfg) file",
            required = true)
    @Completion(FileCompleter.class)
    String file = null;

    @Option(name = "--dry-run", description = "only synthesize and compute the placement")
    boolean dryRun = false;

    @Option(name = "--update", description = "update the running chain of this name make-before-break: the new "
            + "version runs beside it until traffic moves (docs/updates.md)")
    String update = null;

    @Override
    protected void run() {
        Path path = Paths.get(file);
        String json;
        try {
            json = new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
        } catch (IOException e) {
            error("cannot read %s: %s", path, e.getMessage());
            return;
        }
        if (dryRun) {
            ValidationReport r = metron().validate(json);
            print("chain %s: %d classes, %d groups, %d offload rules; %s", r.chainId(), r.classes(), r.groups(),
                    r.offloadRules(), r.placement().map(p -> "would run on " + MetronText.server(p) + " nic " + p.nic()
                            + " cores " + MetronText.list(p.cores()) + ", offload on " + MetronText.offloadDevice(p))
                            .orElse("not placeable: " + r.placementError()));
            return;
        }
        if (update != null) {
            Chain c = metron().update(ChainId.of(update), json);
            print("chain %s %s: %s", c.id(), c.state(), c.reason());
            return;
        }
        Chain c = metron().submit(json);
        print("chain %s %s", c.id(), c.state());
    }
}
