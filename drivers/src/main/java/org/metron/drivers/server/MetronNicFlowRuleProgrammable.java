package org.metron.drivers.server;

import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleProgrammable;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.slf4j.LoggerFactory.getLogger;

/**
 * The server NICs' rule tables (tag/flow → queue) as ONOS flow rules. A batch is applied all-or-nothing by the
 * agent; rules that cannot be expressed on a NIC are left out (and logged) rather than failing the others,
 * as FlowRuleProgrammable reports what it applied.
 */
public class MetronNicFlowRuleProgrammable extends AbstractMetronBehaviour implements FlowRuleProgrammable {

    private final Logger log = getLogger(getClass());

    private NicRuleTranslator translator(AgentClient agent) {
        return new NicRuleTranslator(NicPorts.of(await(agent.getResources())));
    }

    @Override
    public Collection<FlowEntry> getFlowEntries() {
        try {
            AgentClient agent = agent();
            NicRuleTranslator t = translator(agent);
            List<FlowEntry> entries = new ArrayList<>();
            for (NicRule r : await(agent.listNicRules("")).getRulesList()) {
                try {
                    entries.add(new DefaultFlowEntry(t.toFlowRule(deviceId(), r), FlowEntry.FlowEntryState.ADDED));
                } catch (IllegalArgumentException e) {
                    log.warn("{}: {}", deviceId(), e.getMessage());
                }
            }
            return entries;
        } catch (AgentException e) {
            log.warn("Cannot list NIC rules of {}: {}", deviceId(), e.getMessage());
            return List.of();
        }
    }

    @Override
    public Collection<FlowRule> applyFlowRules(Collection<FlowRule> rules) {
        try {
            AgentClient agent = agent();
            NicRuleTranslator t = translator(agent);
            NicRuleBatch.Builder batch = NicRuleBatch.newBuilder();
            List<FlowRule> accepted = new ArrayList<>();
            for (FlowRule rule : rules) {
                try {
                    batch.addRules(t.toNicRule(rule));
                    accepted.add(rule);
                } catch (IllegalArgumentException e) {
                    log.warn("{}: not applied: {}", deviceId(), e.getMessage());
                }
            }
            if (accepted.isEmpty()) {
                return List.of();
            }
            await(agent.installNicRules(batch.build()));
            return accepted;
        } catch (AgentException e) {
            log.warn("Cannot install NIC rules on {}: {}", deviceId(), e.getMessage());
            return List.of();
        }
    }

    /** Rules the agent does not hold count as removed: ONOS may remove what a restarted agent already lost. */
    @Override
    public Collection<FlowRule> removeFlowRules(Collection<FlowRule> rules) {
        try {
            AgentClient agent = agent();
            Set<Long> installed = await(agent.listNicRules("")).getRulesList().stream()
                    .map(NicRule::getId).collect(Collectors.toCollection(HashSet::new));
            List<Long> ids = rules.stream().map(r -> r.id().value()).filter(installed::contains)
                    .collect(Collectors.toList());
            if (!ids.isEmpty()) {
                await(agent.removeNicRules(ids));
            }
            return rules;
        } catch (AgentException e) {
            if (e.code() != AgentException.Code.NOT_FOUND) {
                log.warn("Cannot remove NIC rules from {}: {}", deviceId(), e.getMessage());
            }
            return List.of();
        }
    }
}
