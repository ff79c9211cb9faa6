package org.metron.app.rest;

import org.onosproject.rest.ApiDocProvider;
import org.onosproject.rest.ApiDocService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Gives ONOS's API documentation (/onos/v1/docs) the Metron REST API's document, {@link ApiDocument}: the
 * hand-written contract, not one generated from the resources (onos-maven-plugin's swagger goal is off).
 */
@Component(immediate = true)
public class ApiDocRegistrator {
    static final String KEY = "/onos/metron";

    protected final ApiDocProvider provider = new ApiDocProvider(KEY, "Metron REST API",
            ApiDocRegistrator.class.getClassLoader()) {
        @Override
        public InputStream docs() {
            return new ByteArrayInputStream(ApiDocument.json().getBytes(StandardCharsets.UTF_8));
        }
    };

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ApiDocService service;

    @Activate
    protected void activate() {
        service.register(provider);
    }

    @Deactivate
    protected void deactivate() {
        service.unregister(provider);
    }
}
