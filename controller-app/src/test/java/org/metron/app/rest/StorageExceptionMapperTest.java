package org.metron.app.rest;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.Test;
import org.onosproject.store.service.StorageException;

import javax.ws.rs.core.Response;
import java.io.IOException;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** A failed cluster-store call answers 503 with Retry-After and the error body every other error has. */
public class StorageExceptionMapperTest {
    private static JsonNode body(Response r) throws IOException {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree((String) r.getEntity());
    }

    @Test
    public void aStoreThatDoesNotAnswerIs503NamingTheFailureNot500() throws IOException {
        StorageExceptionMapper m = new StorageExceptionMapper();
        Response r = m.toResponse(new StorageException.Unavailable());
        assertEquals(503, r.getStatus());
        assertEquals(String.valueOf(StorageExceptionMapper.RETRY_AFTER_S), r.getHeaderString("Retry-After"));
        JsonNode b = body(r);
        assertEquals("STORE_UNAVAILABLE", b.get("error").asText());
        assertEquals(503, b.get("status").asInt());
        assertTrue(b.get("message").asText(), b.get("message").asText().contains("(Unavailable)"));

        JsonNode reset = body(m.toResponse(new StorageException(new IOException("Connection reset by peer"))));
        assertTrue(reset.get("message").asText(), reset.get("message").asText()
                .contains("(StorageException: java.io.IOException: Connection reset by peer)"));
    }
}
