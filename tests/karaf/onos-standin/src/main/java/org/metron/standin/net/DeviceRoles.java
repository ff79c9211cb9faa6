package org.metron.standin.net;

import org.onosproject.cluster.NodeId;
import org.onosproject.mastership.MastershipEvent;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.MastershipRole;
import org.onosproject.net.device.DeviceProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How ONOS 2.7.0's DeviceManager keeps device roles (its InternalMastershipListener, handleMastershipEvent,
 * reassertRole and mastershipCheck), for {@link DeviceManagerStandin}: a role granted for a device its provider
 * cannot reach is relinquished; a reachable device without a role gets one at the periodic check.
 */
final class DeviceRoles {
    private final Logger log = LoggerFactory.getLogger(DeviceManagerStandin.class);
    private final DeviceManagerStandin devices;
    private final MastershipService mastership;
    private final NodeId local;

    DeviceRoles(DeviceManagerStandin devices, MastershipService mastership, NodeId local) {
        this.devices = devices;
        this.mastership = mastership;
        this.local = local;
    }

    /** DeviceManager.handleMastershipEvent of ONOS 2.7.0: keep a granted role only for a reachable device. */
    void handleMastershipEvent(MastershipEvent event) {
        if (event.type() != MastershipEvent.Type.MASTER_CHANGED) {
            return;
        }
        DeviceId id = event.subject();
        // an event naming this node master is checked against the current term, as DeviceManager does: the role may
        // have moved on since (a node's death moves a switch through several nodes within milliseconds), and a node
        // acting on the stale event asked the switch for MASTER after the real master had (Open vSwitch gives it to
        // the last asker, so the real master's connection went slave and its rules were refused, IS_SLAVE)
        MastershipRole next = !local.equals(event.roleInfo().master()) ? MastershipRole.NONE
                : local.equals(mastership.getMasterFor(id)) ? MastershipRole.MASTER : MastershipRole.STANDBY;
        try {
            if (!devices.isReachable(id)) {
                if (next != MastershipRole.NONE) {
                    log.warn("Node was instructed to be {} role for {}, but this node cannot reach the device. "
                                     + "Relinquishing role.", next, id);
                    mastership.relinquishMastership(id);
                }
                return;
            }
            if (devices.getDevice(id) != null) {
                reassertRole(id, next);
            }
        } catch (RuntimeException e) {
            log.warn("Failed to handle {}", event, e);
        }
    }

    /**
     * DeviceManager.reassertRole: a role for a reachable device (NONE: ask for one), applied through the provider;
     * MASTER brings it online.
     */
    private void reassertRole(DeviceId id, MastershipRole role) {
        if (role == MastershipRole.NONE) {
            role = mastership.requestRoleFor(id).join();
        }
        DeviceProvider p = devices.providerOf(id);
        if (p == null || role == MastershipRole.NONE) {
            return;
        }
        if (role == MastershipRole.STANDBY) {
            // applyRoleAndProbe(STANDBY): an OpenFlow switch's connection goes EQUAL (OpenFlowDeviceProvider)
            p.roleChanged(id, MastershipRole.STANDBY);
            return;
        }
        devices.markOnline(id);
        p.roleChanged(id, MastershipRole.MASTER);
        p.triggerProbe(id);
    }

    /** DeviceManager.mastershipCheck: a reachable device gets a role, an unreachable one goes offline. */
    void mastershipCheck() {
        for (Device d : devices.getDevices()) {
            DeviceId id = d.id();
            try {
                MastershipRole role = mastership.getLocalRole(id);
                if (!devices.isReachable(id)) {
                    if (role == MastershipRole.NONE) {
                        mastership.requestRoleFor(id).join();
                    }
                    if (mastership.isLocalMaster(id) && devices.isAvailable(id)) {
                        log.info("Marking unreachable device {} offline", id);
                        devices.markOffline(id, true);
                    }
                } else if (role == MastershipRole.NONE) {
                    log.info("{} is reachable but did not have a valid role, reasserting", id);
                    reassertRole(id, MastershipRole.NONE);
                }
            } catch (RuntimeException e) {
                log.warn("mastership check of {} failed", id, e);
            }
        }
    }
}
