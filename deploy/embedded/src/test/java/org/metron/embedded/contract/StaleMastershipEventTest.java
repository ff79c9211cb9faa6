package org.metron.embedded.contract;

import org.junit.After;
import org.junit.Test;
import org.metron.standin.MastershipStandin;
import org.onlab.packet.ChassisId;
import org.onosproject.cluster.NodeId;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DefaultDeviceDescription;
import org.onosproject.net.device.DeviceProvider;
import org.onosproject.net.provider.ProviderId;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

/**
 * The Karaf stand-in's DeviceManagerStandin handles a MASTER_CHANGED naming this node master as ONOS 2.7.0's
 * DeviceManager.handleMastershipEvent does: it checks the event against the current master (ONOS: its term service)
 * and takes STANDBY when mastership has moved on since the event was posted. Events are handled on the device
 * manager's background thread, so a node's mastership can change several times before it reads the first event; a
 * node acting on a stale MASTER event asked its switch for MASTER after the real master had (Open vSwitch gives
 * the role to the last asker, so the real master's rules were refused). One node here (its stand-in masters alone),
 * so "moved on" is "given up": the device's provider holds the background thread while mastership is requested
 * (the event naming this node master is queued) and given up again, then lets it go on.
 */
public class StaleMastershipEventTest {
    private static final DeviceId SWITCH = DeviceId.deviceId("of:0000000000000001");
    private final StandinNode node = new StandinNode();
    private final NodeId local = node.cluster.getLocalNode().id();

    @After
    public void stop() {
        node.stop();
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long end = System.currentTimeMillis() + 10_000;
        while (!done.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                fail(what + ": not within 10 s");
            }
            Thread.sleep(10);
        }
    }

    @Test
    public void aStaleMasterEventMakesThisNodeStandbyNotMaster() throws Exception {
        MastershipStandin mastership = node.mastership();
        Switch sw = new Switch(mastership);
        node.devices().register(sw).deviceConnected(SWITCH, new DefaultDeviceDescription(SWITCH.uri(),
                Device.Type.SWITCH, "Nicira, Inc.", "Open vSwitch", "3.1.0", "none", new ChassisId(1)));
        // told MASTER at the connect; the connect's MASTER_CHANGED is read on the background thread, which asks
        // whether the switch is reachable (and, if the device was stored by then, tells MASTER again): once asked,
        // the events below queue behind that one, so the hold below catches the relinquish's event, not the connect's
        await("the switch mastered", () -> sw.told(MastershipRole.MASTER, local) && sw.asked.get() >= 1);

        CountDownLatch release = new CountDownLatch(1);
        sw.hold = release;
        mastership.relinquishMastership(SWITCH).join();  // its MASTER_CHANGED holds the background thread
        assertTrue("the device manager asked whether the switch is reachable", sw.held.await(10, TimeUnit.SECONDS));
        mastership.requestRoleFor(SWITCH).join();        // MASTER_CHANGED naming this node: queued behind it
        mastership.relinquishMastership(SWITCH).join();  // moved on before that event is read
        sw.roles.clear();
        release.countDown();

        // the stale event is read while the device has no master (STANDBY); the next gives it a master again
        await("the switch mastered again", () -> sw.told(MastershipRole.MASTER, local));
        assertTrue("the stale event read: " + sw.roles, sw.roles.stream().anyMatch(r -> r.role == MastershipRole.STANDBY));
        for (Told t : sw.roles) {
            assertTrue("asked the switch for MASTER while " + t.master + " was its master: " + sw.roles,
                    t.role != MastershipRole.MASTER || local.equals(t.master));
        }
    }

    /** A role the device manager gave the switch, with the device's master when it did. */
    private static final class Told {
        final MastershipRole role;
        final NodeId master;

        Told(MastershipRole role, NodeId master) {
            this.role = role;
            this.master = master;
        }

        @Override
        public String toString() {
            return role + " (master " + master + ")";
        }
    }

    /**
     * The switch's device provider: reachable, but the first reachability question after {@link #hold} is set is
     * held until it is counted down and answered no (so that event's handling does not ask for the role again).
     */
    private static final class Switch implements DeviceProvider {
        final List<Told> roles = new CopyOnWriteArrayList<>();
        final CountDownLatch held = new CountDownLatch(1);
        final AtomicInteger asked = new AtomicInteger();
        volatile CountDownLatch hold;
        private final MastershipStandin mastership;

        Switch(MastershipStandin mastership) {
            this.mastership = mastership;
        }

        boolean told(MastershipRole role, NodeId master) {
            return roles.stream().anyMatch(t -> t.role == role && Objects.equals(t.master, master));
        }

        @Override
        public ProviderId id() {
            return StandinNode.PROVIDER;
        }

        @Override
        public void triggerProbe(DeviceId deviceId) {
        }

        @Override
        public void roleChanged(DeviceId deviceId, MastershipRole newRole) {
            roles.add(new Told(newRole, mastership.getMasterFor(deviceId)));
        }

        @Override
        public boolean isReachable(DeviceId deviceId) {
            CountDownLatch h = hold;
            if (h == null) {
                asked.incrementAndGet();
                return true;
            }
            hold = null;
            held.countDown();
            try {
                h.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return false;
        }

        @Override
        public void changePortState(DeviceId deviceId, PortNumber portNumber, boolean enable) {
        }
    }
}
