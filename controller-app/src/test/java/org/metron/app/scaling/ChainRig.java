package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.TestSwitches;

/**
 * What every scaling test rig ({@link ScalingFixture.Rig}, {@link ScaleOutFixture.Rig}) builds its chain manager
 * and executor on: the switch stand-in with its crashing wrapper, the chain and scaling stores, and the one chain
 * it deploys, with that chain's placement as the store holds it.
 */
class ChainRig {
    final TestSwitches switches = new TestSwitches();
    final CrashingSwitches crashing = new CrashingSwitches(switches);
    final LocalStoreFactory factory = new LocalStoreFactory();
    final ChainStore store = new ChainStore(factory, switches);
    final ScalingStore scaling = new ScalingStore(factory);
    final ChainId chain;

    ChainRig(String name) {
        chain = ChainId.of(name);
    }

    Placement placement() {
        return store.placements().get(chain).get().value();
    }

    GroupAssignment group(String id) {
        return placement().groups().stream().filter(g -> g.groupId().equals(id)).findFirst().get();
    }
}
