package org.metron.app.cli;

import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.metron.app.api.MetronService;
import org.onosproject.cli.AbstractChoicesCompleter;

import java.util.List;
import java.util.stream.Collectors;

import static org.onosproject.cli.AbstractShellCommand.get;

/** Completes chain names. */
@Service
public class ChainNameCompleter extends AbstractChoicesCompleter {
    @Override
    protected List<String> choices() {
        return get(MetronService.class).chains().stream().map(c -> c.id().name()).collect(Collectors.toList());
    }
}
