// Metron dashboard: polls the REST API (/onos/metron) and the dashboard's own tables.json / topology.json every
// PERIOD_MS and redraws: the topology with where each chain runs, packet rates and core load over the last
// WINDOW_MS (kept here, since the page opened), scaling events on the rate charts, problems, and the tables of
// the ONOS view (rows formatted by the controller: org.metron.app.gui.MetronTables). No library, no network
// access beyond this host: the page works offline.
(function () {
    'use strict';

    var REST = '/onos/metron';
    var PERIOD_MS = 2000;
    var TOPOLOGY_PERIOD_MS = 10000;
    var WINDOW_MS = 5 * 60 * 1000;
    var SVG = 'http://www.w3.org/2000/svg';
    var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2',
        '#7f7f7f', '#bcbd22'];

    var history = { chains: {}, cores: {}, load: {} };  // series name -> [[time ms, value], ...]
    var events = {};                                      // chain@at -> scaling event
    var topology = null;
    var topologyAt = 0;
    var colorOf = {};

    function color(name) {
        if (!(name in colorOf)) {
            colorOf[name] = COLORS[Object.keys(colorOf).length % COLORS.length];
        }
        return colorOf[name];
    }

    // absolute, from the origin: the page's own URL may carry user:password@, which fetch refuses to reuse
    function get(path) {
        var url = location.origin + (path.charAt(0) === '/' ? path : location.pathname.replace(/[^/]*$/, '') + path);
        return fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
            if (!r.ok) {
                throw new Error('GET ' + path + ': HTTP ' + r.status);
            }
            return r.json();
        });
    }

    // an element of the page (el) or of a drawing (svgEl): attributes, text, parent
    function make(create) {
        return function (tag, attrs, text, parent) {
            var e = create(tag);
            Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
            if (text !== undefined && text !== null) {
                e.textContent = text;
            }
            if (parent) {
                parent.appendChild(e);
            }
            return e;
        };
    }

    var el = make(function (tag) { return document.createElement(tag); });
    var svgEl = make(function (tag) { return document.createElementNS(SVG, tag); });

    function clear(node) {
        while (node.firstChild) {
            node.removeChild(node.firstChild);
        }
    }

    // ---- history ------------------------------------------------------------------------------------------

    function record(kind, name, now, value) {
        var s = history[kind][name] || (history[kind][name] = []);
        s.push([now, value]);
        while (s.length && s[0][0] < now - WINDOW_MS) {
            s.shift();
        }
    }

    function sample(now, scaling, servers) {
        (scaling ? scaling.chains : []).forEach(function (c) {
            if (typeof c.ingressPps === 'number') {
                record('chains', c.chain, now, c.ingressPps);
            }
            (c.history || []).forEach(function (e) {
                events[e.chain + '@' + e.at] = e;
            });
        });
        var perCore = {};
        (scaling ? scaling.chains : []).forEach(function (c) {
            if (!c.load) {
                return;
            }
            c.load.groups.forEach(function (g) {
                var key = c.load.server + ' core ' + g.core;
                var rate = Object.keys(g.classRates).reduce(function (a, k) { return a + g.classRates[k]; }, 0);
                perCore[key] = (perCore[key] || 0) + rate;
            });
        });
        Object.keys(perCore).forEach(function (k) { record('cores', k, now, perCore[k]); });
        (servers ? servers.servers : []).forEach(function (s) {
            (s.cores || []).forEach(function (c) {
                if (c.chain || history.load[s.id + ' core ' + c.id]) {
                    record('load', s.id + ' core ' + c.id, now, 100 * c.load);
                }
            });
        });
        Object.keys(events).forEach(function (k) {
            if (events[k].at < now - WINDOW_MS) {
                delete events[k];
            }
        });
    }

    // ---- charts -------------------------------------------------------------------------------------------

    // axis labels only; every value in the tables is formatted by the controller
    function axis(v, unit) {
        if (unit === '%') {
            return v.toFixed(0) + '%';
        }
        return v >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : v >= 1e3 ? (v / 1e3).toFixed(1) + 'k'
            : v.toFixed(v >= 10 || v === 0 ? 0 : 1);
    }

    function chart(svg, data, unit, now, withEvents) {
        clear(svg);
        var w = svg.clientWidth || 400;
        var h = svg.clientHeight || 190;
        var left = 46;
        var right = 8;
        var top = 8;
        var bottom = 18;
        var names = Object.keys(data).filter(function (n) { return data[n].length; }).sort();
        var max = unit === '%' ? 100 : 1;
        names.forEach(function (n) {
            data[n].forEach(function (p) { max = Math.max(max, p[1] * 1.1); });
        });
        var x = function (t) { return left + (w - left - right) * (t - (now - WINDOW_MS)) / WINDOW_MS; };
        var y = function (v) { return h - bottom - (h - top - bottom) * v / max; };
        svgEl('line', { x1: left, y1: h - bottom, x2: w - right, y2: h - bottom, 'class': 'axis' }, null, svg);
        svgEl('line', { x1: left, y1: top, x2: left, y2: h - bottom, 'class': 'axis' }, null, svg);
        for (var i = 0; i <= 4; i++) {
            var v = max * i / 4;
            svgEl('text', { x: left - 4, y: y(v) + 3, 'text-anchor': 'end', 'class': 'tick' }, axis(v, unit), svg);
        }
        for (var m = 0; m <= 5; m++) {
            svgEl('text', { x: x(now - m * 60000), y: h - 4, 'text-anchor': 'middle', 'class': 'tick' },
                m === 0 ? 'now' : '-' + m + ' min', svg);
        }
        if (withEvents) {
            Object.keys(events).sort().forEach(function (k) {
                var e = events[k];
                var ex = x(e.at);
                var g = svgEl('g', { 'class': 'scaling-event', 'data-chain': e.chain, 'data-kind': e.kind }, null, svg);
                svgEl('line', { x1: ex, y1: top, x2: ex, y2: h - bottom, 'class': 'event' }, null, g);
                var leftward = ex > w - right - 90;  // near the right edge the label reads leftwards
                svgEl('text', { x: leftward ? ex - 2 : ex + 2, y: top + 10, 'text-anchor': leftward ? 'end' : 'start',
                    'class': 'event-label' },
                    e.kind + (e.outcome === 'DONE' ? '' : ' (' + e.outcome.toLowerCase() + ')'), g);
            });
        }
        if (!names.length) {
            svgEl('text', { x: w / 2, y: h / 2, 'text-anchor': 'middle', 'class': 'tick' },
                'no measurements yet', svg);
            return;
        }
        names.forEach(function (n, idx) {
            var pts = data[n].map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); });
            svgEl('polyline', { points: pts.join(' '), stroke: color(n), 'class': 'series', 'data-series': n },
                null, svg);
            var last = data[n][data[n].length - 1][1];
            svgEl('text', { x: left + 8, y: top + 12 + 12 * idx, fill: color(n), 'class': 'legend',
                'data-series': n }, n + ': ' + axis(last, unit) + (unit === '%' ? '' : ' pps'), svg);
        });
    }

    // ---- topology -----------------------------------------------------------------------------------------

    function deviceOf(point) {
        return point ? point.substring(0, point.lastIndexOf('/')) : '';
    }

    // switches in columns by hops from the ingress switches; hosts above and servers below their switch
    function layout(t, w, h) {
        var adj = {};
        t.switches.forEach(function (s) { adj[s.id] = []; });
        t.links.forEach(function (l) {
            var a = deviceOf(l[0]);
            var b = deviceOf(l[1]);
            if (adj[a] && adj[b]) {
                adj[a].push(b);
                adj[b].push(a);
            }
        });
        var depth = {};
        var queue = t.ingress.map(deviceOf).filter(function (d) { return d in adj; });
        if (!queue.length && t.switches.length) {
            queue = [t.switches[0].id];
        }
        queue.forEach(function (d) { depth[d] = 0; });
        while (queue.length) {
            var d = queue.shift();
            adj[d].forEach(function (n) {
                if (!(n in depth)) {
                    depth[n] = depth[d] + 1;
                    queue.push(n);
                }
            });
        }
        var columns = [];
        t.switches.forEach(function (s) {
            var c = s.id in depth ? depth[s.id] : 0;
            (columns[c] = columns[c] || []).push(s);
        });
        var pos = {};
        var colW = w / Math.max(1, columns.length);
        columns.forEach(function (col, c) {
            col.sort(function (a, b) { return a.name.localeCompare(b.name); });
            col.forEach(function (s, i) {
                pos[s.id] = { x: colW * (c + 0.5), y: 95 + (h - 190) * (i + 0.5) / col.length };
            });
        });
        var below = {};
        t.servers.forEach(function (s) {
            var at = Object.keys(s.nics).map(function (n) { return deviceOf(s.nics[n]); })
                .filter(function (d) { return pos[d]; })[0];
            (below[at || ''] = below[at || ''] || []).push(s);
        });
        var bottomRow = [].concat.apply([], Object.keys(below).sort(function (a, b) {
            return (pos[a] ? pos[a].x : 0) - (pos[b] ? pos[b].x : 0);
        }).map(function (k) { return below[k]; }));
        bottomRow.forEach(function (s, i) {
            pos[s.id] = { x: w * (i + 0.5) / bottomRow.length, y: h - 32 };
        });
        t.hosts.forEach(function (hst, i) {
            pos['host:' + hst.name] = { x: w * (i + 0.5) / t.hosts.length, y: 24 };
        });
        return pos;
    }

    function node(svg, cls, id, p, label, sub, circle) {
        var g = svgEl('g', { 'class': 'node ' + cls, 'data-id': id }, null, svg);
        if (circle) {
            svgEl('circle', { cx: p.x, cy: p.y, r: 14 }, null, g);
        } else {
            svgEl('rect', { x: p.x - 66, y: p.y - 17, width: 132, height: 34, rx: 5 }, null, g);
        }
        svgEl('text', { x: p.x, y: p.y - (sub ? 2 : -4), 'text-anchor': 'middle' }, label, g);
        if (sub) {
            svgEl('text', { x: p.x, y: p.y + 11, 'text-anchor': 'middle', 'class': 'sub' }, sub, g);
        }
        return g;
    }

    function drawTopology(t, chains, placements, placementRows, servers) {
        var svg = document.getElementById('topology');
        clear(svg);
        if (!t) {
            return;
        }
        var w = svg.clientWidth || 900;
        var h = svg.clientHeight || 320;
        var pos = layout(t, w, h);
        var line = function (a, b, cls, extra) {
            if (pos[a] && pos[b]) {
                var attrs = { x1: pos[a].x, y1: pos[a].y, x2: pos[b].x, y2: pos[b].y, 'class': cls };
                Object.keys(extra || {}).forEach(function (k) { attrs[k] = extra[k]; });
                svgEl('line', attrs, null, svg);
            }
        };
        t.links.forEach(function (l) { line(deviceOf(l[0]), deviceOf(l[1]), 'link'); });
        t.hosts.forEach(function (hst) { line('host:' + hst.name, deviceOf(hst.at), 'link'); });
        t.servers.forEach(function (s) {
            Object.keys(s.nics).forEach(function (n) { line(s.id, deviceOf(s.nics[n]), 'link'); });
        });
        // each chain: ingress point -> offload device -> server -> egress point, labelled with its groups' tags
        var chainOf = {};
        (chains ? chains.chains : []).forEach(function (c) { chainOf[c.name] = c; });
        (placements ? placements.placements : []).forEach(function (p, i) {
            var c = chainOf[p.chain];
            var stops = [c ? deviceOf(c.ingressPoint) : '', p.offloadDevice, p.server, c ? deviceOf(c.egressPoint) : '']
                .filter(function (d) { return d && pos[d]; });
            var off = 4 * (i + 1);
            var g = svgEl('g', { 'class': 'chain', 'data-chain': p.chain, 'data-server': p.server,
                'data-offload': p.offloadDevice }, null, svg);
            svgEl('polyline', { points: stops.map(function (d) { return (pos[d].x + off) + ',' + (pos[d].y + off); })
                .join(' '), stroke: color(p.chain), 'class': 'chain-path' }, null, g);
            var at = pos[p.server] || pos[p.offloadDevice];
            var row = placementRows[p.chain];
            if (at) {
                svgEl('text', { x: at.x + 72, y: at.y - 8 + 13 * i, fill: color(p.chain), 'class': 'chain-label' },
                    p.chain + (row ? ': ' + row.groups : ''), g);
            }
        });
        var load = {};
        (servers ? servers.servers : []).forEach(function (s) { load[s.id] = s; });
        t.switches.forEach(function (s) {
            node(svg, 'switch' + (s.up ? '' : ' down'), s.id, pos[s.id], s.name, s.up ? s.id : 'disconnected');
        });
        t.servers.forEach(function (s) {
            var info = load[s.id];
            var sub = !info ? s.id : !info.reachable ? 'unreachable'
                : info.cores.filter(function (c) { return c.chain; }).length + ' of ' + info.cores.length + ' cores used';
            node(svg, 'server', s.id, pos[s.id], s.name, sub);
        });
        t.hosts.forEach(function (hst) {
            node(svg, 'host', 'host:' + hst.name, pos['host:' + hst.name], hst.name, null, true);
        });
    }

    // ---- tables -------------------------------------------------------------------------------------------

    function drawTables(data) {
        var root = document.getElementById('tables');
        clear(root);
        data.tables.forEach(function (t) {
            var section = el('section', { 'class': 'panel', id: 'section-' + t.id.toLowerCase() }, null, root);
            el('h2', {}, t.title + ' (' + t.rows.length + ')', section);
            var table = el('table', { id: 'table-' + t.id.toLowerCase() }, null, section);
            var head = el('tr', {}, null, table);
            t.headers.forEach(function (hd) { el('th', {}, hd, head); });
            if (!t.rows.length) {
                el('td', { colspan: t.headers.length, 'class': 'empty' }, t.error || t.empty, el('tr', {}, null, table));
            }
            t.rows.forEach(function (r) {
                var tr = el('tr', {}, null, table);
                r.forEach(function (cell, i) {
                    var cls = t.columns[i] === 'state' ? 'state-' + cell : t.id === 'Problem' ? 'problem' : '';
                    el('td', cls ? { 'class': cls } : {}, cell, tr);
                });
            });
        });
    }

    function rowsById(data, id, key) {
        var out = {};
        var t = data && data.tables.filter(function (x) { return x.id === id; })[0];
        if (t) {
            t.rows.forEach(function (r) {
                var o = {};
                t.columns.forEach(function (c, i) { o[c] = r[i]; });
                out[o[key]] = o;
            });
        }
        return out;
    }

    // ---- polling ------------------------------------------------------------------------------------------

    function settle(p) {
        return p.then(function (v) { return { value: v }; }, function (e) { return { error: e.message }; });
    }

    function poll() {
        var now = Date.now();
        var wantTopology = !topology || now - topologyAt > TOPOLOGY_PERIOD_MS;
        var sources = ['tables.json', REST + '/scaling', REST + '/servers', REST + '/placements', REST + '/chains']
            .concat(wantTopology ? ['topology.json'] : []);
        return Promise.all(sources.map(function (s) { return settle(get(s)); })).then(function (r) {
            var errors = r.filter(function (x) { return x.error; }).map(function (x) { return x.error; });
            if (wantTopology && r[5].value) {
                topology = r[5].value;
                topologyAt = now;
            }
            sample(now, r[1].value, r[2].value);
            if (r[0].value) {
                drawTables(r[0].value);
                r[0].value.tables.filter(function (t) { return t.error; }).forEach(function (t) {
                    errors.push(t.title + ': ' + t.error);
                });
            }
            drawTopology(topology, r[4].value, r[3].value, rowsById(r[0].value, 'Placement', 'chain'), r[2].value);
            chart(document.getElementById('chart-chains'), history.chains, 'pps', now, true);
            chart(document.getElementById('chart-cores'), history.cores, 'pps', now, true);
            chart(document.getElementById('chart-load'), history.load, '%', now, false);
            var box = document.getElementById('errors');
            box.hidden = !errors.length;
            box.textContent = errors.join('\n');
            document.getElementById('status').textContent = 'updated ' + new Date(now).toISOString().substring(11, 19)
                + ' UTC, every ' + PERIOD_MS / 1000 + ' s';
            document.body.setAttribute('data-polls', String(Number(document.body.getAttribute('data-polls') || 0) + 1));
        });
    }

    function loop() {
        poll().catch(function (e) {
            var box = document.getElementById('errors');
            box.hidden = false;
            box.textContent = 'dashboard: ' + e.message;
        }).then(function () { setTimeout(loop, PERIOD_MS); });
    }

    loop();
}());
