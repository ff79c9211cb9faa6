package org.metron.standin;

import org.onosproject.security.AuditService;
import org.osgi.service.component.annotations.Component;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** AuditService (core-net's stand-in), which every ONOS console command calls: auditing off, actions logged. */
@Component(immediate = true, service = AuditService.class)
public class AuditStandin implements AuditService {
    private final Logger log = LoggerFactory.getLogger(getClass());

    @Override
    public boolean isAuditing() {
        return false;
    }

    @Override
    public void logUserAction(String user, String action) {
        log.debug("{}: {}", user, action);
    }
}
