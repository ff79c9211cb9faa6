package org.metron.drivers.p4;

import org.metron.drivers.tagging.TaggerPipeconfId;
import org.onosproject.net.pi.model.DefaultPiPipeconf;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipeconfId;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.p4runtime.model.P4InfoParser;
import org.onosproject.p4runtime.model.P4InfoParserException;

import java.net.URL;

/**
 * The tagging pipeconf: model parsed from p4info.txt, {@link MetronTaggerInterpreter} as interpreter.
 * It carries no target binary (BMv2 JSON, Tofino...): no P4 compiler installs on the build machine, so the
 * device must already run metron_tagger.p4 compiled for it.
 */
public final class MetronTaggerPipeconf {

    public static final PiPipeconfId ID = TaggerPipeconfId.ID;
    public static final String P4INFO = "/p4/p4info.txt";
    public static final String P4_SOURCE = "/p4/metron_tagger.p4";

    private MetronTaggerPipeconf() {
    }

    /** @throws IllegalStateException when p4info.txt is missing from the bundle or does not parse */
    public static PiPipeconf build() {
        URL p4info = MetronTaggerPipeconf.class.getResource(P4INFO);
        if (p4info == null) {
            throw new IllegalStateException("metron tagger pipeconf: " + P4INFO + " is not on the classpath");
        }
        try {
            return DefaultPiPipeconf.builder()
                    .withId(ID)
                    .withPipelineModel(P4InfoParser.parse(p4info))
                    .addBehaviour(PiPipelineInterpreter.class, MetronTaggerInterpreter.class)
                    .addExtension(org.onosproject.net.pi.model.PiPipeconf.ExtensionType.P4_INFO_TEXT, p4info)
                    .build();
        } catch (P4InfoParserException e) {
            throw new IllegalStateException("metron tagger pipeconf: cannot parse " + P4INFO + ": "
                                                    + e.getMessage(), e);
        }
    }
}
