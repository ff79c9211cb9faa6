package org.metron.app.store;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.DeploymentSpec;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TagType;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.serializers.KryoNamespaces;

/**
 * The one Kryo namespace of every type Metron stores. Registration order is the wire format: append new types
 * at the end, never reorder, so instances of different versions can share a cluster.
 */
public final class MetronSerializers {
    /** ONOS API types (DeviceId, ConnectPoint, FlowRule, ImmutableList, ...) plus Metron's own. */
    public static final KryoNamespace NAMESPACE = KryoNamespace.newBuilder()
            .register(KryoNamespaces.API)
            .nextId(KryoNamespaces.BEGIN_USER_CUSTOM_ID)
            .register(ChainId.class, ChainState.class, TagType.class, Tag.class, DeploymentSpec.class,
                    Chain.class, GroupAssignment.class, Placement.class, TagAllocation.class, TagKey.class,
                    RuleInfo.Role.class)
            // tens of thousands per chain: written as numbers, not as object graphs
            .register(new InstalledRuleSerializer(), InstalledRule.class)
            .register(InstalledState.class, BackupConfiguration.class)
            .register(FailoverBackup.class)
            .register(org.metron.app.api.ClassSlice.class)
            .register(org.metron.app.api.PendingPart.class)
            .build("metron");

    private MetronSerializers() {
    }
}
