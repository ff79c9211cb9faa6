package org.metron.app.gui;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import org.metron.app.api.MetronService;
import org.onosproject.ui.RequestHandler;
import org.onosproject.ui.UiMessageHandler;
import org.onosproject.ui.table.TableModel;
import org.onosproject.ui.table.TableRequestHandler;

import java.util.Collection;
import java.util.function.BiConsumer;

/** Serves the Metron view's tables (ONOS table protocol: xDataRequest → xDataResponse with rows "xs"). */
public class MetronViewMessageHandler extends UiMessageHandler {
    private final MetronService metron;

    public MetronViewMessageHandler(MetronService metron) {
        this.metron = metron;
    }

    @Override
    protected Collection<RequestHandler> createRequestHandlers() {
        return ImmutableSet.of(
                new Table("metronChain", "metronChains", MetronTables.CHAIN_COLUMNS, "name", "No chains",
                        MetronTables::chains),
                new Table("metronClass", "metronClasss", MetronTables.CLASS_COLUMNS, "id", "No traffic classes",
                        MetronTables::classes),
                new Table("metronCore", "metronCores", MetronTables.CORE_COLUMNS, "id", "No Metron servers",
                        MetronTables::cores));
    }

    /** One table of the view. */
    private final class Table extends TableRequestHandler {
        private final String[] columns;
        private final String key;
        private final String empty;
        private final BiConsumer<MetronService, TableModel> fill;

        Table(String tag, String rows, String[] columns, String key, String empty,
              BiConsumer<MetronService, TableModel> fill) {
            super(tag + "DataRequest", tag + "DataResponse", rows);
            this.columns = columns;
            this.key = key;
            this.empty = empty;
            this.fill = fill;
        }

        @Override
        protected String[] getColumnIds() {
            return columns;
        }

        @Override
        protected String defaultColumnId() {
            return key;
        }

        @Override
        protected String noRowsMessage(ObjectNode payload) {
            return empty;
        }

        @Override
        protected void populateTable(TableModel tm, ObjectNode payload) {
            fill.accept(metron, tm);
        }
    }
}
