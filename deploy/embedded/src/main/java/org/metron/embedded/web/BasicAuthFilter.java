package org.metron.embedded.web;

import javax.annotation.Priority;
import javax.ws.rs.Priorities;
import javax.ws.rs.container.ContainerRequestContext;
import javax.ws.rs.container.ContainerRequestFilter;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;

/**
 * HTTP Basic authentication for the REST API: sets the caller's principal and roles, which ONOS's own
 * {@code AuthorizationFilter} (registered by {@code AbstractWebApplication}) then checks (viewer to read,
 * admin to write). Runs first, at AUTHENTICATION priority; unauthenticated calls get 401.
 */
@Priority(Priorities.AUTHENTICATION)
public final class BasicAuthFilter implements ContainerRequestFilter {
    private final Credentials credentials;

    public BasicAuthFilter(Credentials credentials) {
        this.credentials = credentials;
    }

    @Override
    public void filter(ContainerRequestContext ctx) {
        Optional<String[]> userPass = parse(ctx.getHeaderString(HttpHeaders.AUTHORIZATION));
        Optional<Set<String>> roles = userPass.flatMap(up -> credentials.authenticate(up[0], up[1]));
        if (roles.isEmpty()) {
            ctx.abortWith(Response.status(Response.Status.UNAUTHORIZED)
                    .header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"metron\"")
                    .type(MediaType.APPLICATION_JSON_TYPE)
                    .entity("{\"code\": 401, \"message\": \"authentication required (HTTP Basic, users in "
                            + Credentials.FILE + ")\"}").build());
            return;
        }
        String user = userPass.get()[0];
        boolean secure = ctx.getSecurityContext() != null && ctx.getSecurityContext().isSecure();
        ctx.setSecurityContext(new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return () -> user;
            }

            @Override
            public boolean isUserInRole(String role) {
                return roles.get().contains(role);
            }

            @Override
            public boolean isSecure() {
                return secure;
            }

            @Override
            public String getAuthenticationScheme() {
                return SecurityContext.BASIC_AUTH;
            }
        });
    }

    static Optional<String[]> parse(String header) {
        if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
            return Optional.empty();
        }
        try {
            String decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            return colon < 0 ? Optional.empty()
                    : Optional.of(new String[]{decoded.substring(0, colon), decoded.substring(colon + 1)});
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
