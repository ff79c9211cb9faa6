package org.metron.app.store;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.synth.TagType;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.serializers.KryoNamespaces;

/**
 * The one Kryo namespace of every type Metron stores. Registration order is the wire format: append new types
 * at the end, never reorder, so a record written by an older version still reads. Ids: {@value #FIRST_ID} to 515
 * as b792e96 stored them; scaling's types from {@link #SCALING_FIRST_ID} (ScalingStore, which extends this
 * namespace); what was added since from {@link #LATER_FIRST_ID}. A type whose fields change gets its own
 * serializer with a format number ({@link ChainSerializer}), registered again after its old registration: Kryo
 * writes with the last registration of a class and reads each id with its own.
 */
public final class MetronSerializers {
    static final int FIRST_ID = KryoNamespaces.BEGIN_USER_CUSTOM_ID;
    /** Where scaling's types start: right after b792e96's, where its stored journals have them. */
    public static final int SCALING_FIRST_ID = FIRST_ID + 16;
    /** Where the types added after b792e96 start, clear of scaling's. */
    static final int LATER_FIRST_ID = FIRST_ID + 100;

    /** ONOS API types (DeviceId, ConnectPoint, FlowRule, ImmutableList, ...) plus Metron's own. */
    public static final KryoNamespace NAMESPACE = KryoNamespace.newBuilder()
            .register(KryoNamespaces.API)
            .nextId(FIRST_ID)
            .register(ChainId.class, ChainState.class, TagType.class, Tag.class)
            .register(new DeploymentSerializer(), Deployment.class)
            // chain records written before ChainSerializer (id 505): read only
            .register(new ChainSerializer.Legacy(), Chain.class)
            .register(GroupAssignment.class, Placement.class, TagAllocation.class, TagKey.class,
                    RuleInfo.Role.class)
            // tens of thousands per chain: written as numbers, not as object graphs
            .register(new InstalledRuleSerializer(), InstalledRule.class)
            .register(InstalledState.class, BackupConfiguration.class)
            .register(FailoverBackup.class)
            .register(org.metron.app.api.ClassSlice.class)
            .nextId(LATER_FIRST_ID)
            .register(org.metron.app.api.PendingPart.class)
            .register(new ChainSerializer(), Chain.class)
            // what replaced stored InstalledStates (their rules are read from the devices); old ones still read
            .register(new InstalledRecordSerializer(), InstalledRecord.class)
            .register(PreparedMoveRecord.class)
            .register(DrainedServer.class)
            .build("metron");

    private MetronSerializers() {
    }
}
