package org.metron.app.gui;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.RequestHandler;
import org.onosproject.ui.UiMessageHandler;
import org.onosproject.ui.table.TableModel;
import org.onosproject.ui.table.TableRequestHandler;

import java.util.Collection;
import java.util.stream.Collectors;

/**
 * Serves the Metron view's tables ({@link MetronTables#ALL}) over the ONOS table protocol: "metronXDataRequest"
 * answered by "metronXDataResponse" with rows "metronXs".
 */
public class MetronViewMessageHandler extends UiMessageHandler {
    private final MetronService metron;
    private final ScalingService scaling;

    public MetronViewMessageHandler(MetronService metron, ScalingService scaling) {
        this.metron = metron;
        this.scaling = scaling;
    }

    @Override
    protected Collection<RequestHandler> createRequestHandlers() {
        return MetronTables.ALL.stream().map(Table::new).collect(Collectors.toList());
    }

    /** One table of the view. */
    private final class Table extends TableRequestHandler {
        private final ViewTable table;

        Table(ViewTable table) {
            super("metron" + table.id() + "DataRequest", "metron" + table.id() + "DataResponse",
                    "metron" + table.id() + "s");
            this.table = table;
        }

        @Override
        protected String[] getColumnIds() {
            return table.columns().toArray(new String[0]);
        }

        @Override
        protected String defaultColumnId() {
            return table.columns().get(0);
        }

        @Override
        protected String noRowsMessage(ObjectNode payload) {
            return table.empty();
        }

        @Override
        protected void populateTable(TableModel tm, ObjectNode payload) {
            table.fill(metron, scaling, tm);
        }
    }
}
