#include "core/graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <utility>

#include "core/strip_fold.h"

namespace metron {

namespace {

std::string where(const ElementDecl& d) { return "element '" + d.name + "' (" + d.cls + "): "; }

std::string range_text(PortCountRange r) {
  if (r.max < 0) return "at least " + std::to_string(r.min);
  if (r.min == r.max) return std::to_string(r.min);
  return std::to_string(r.min) + " to " + std::to_string(r.max);
}

}  // namespace

Graph::~Graph() = default;

std::unique_ptr<Graph> Graph::build(const std::string& text, const GraphEnv& env) {
  return build(parse_click(text, /*allow_ports=*/true), env);
}

std::unique_ptr<Graph> Graph::build(const ClickConfig& written, const GraphEnv& env) {
  // The graph runs the configuration with its Strip/Unstrip pairs folded where nothing can tell (strip_fold.h).
  const ClickConfig cfg = fold_strips(written);
  std::unique_ptr<Graph> g(new Graph());
  const size_t n = cfg.elements.size();
  g->elements_.reserve(n);

  // 1. Instantiate and configure.
  for (const ElementDecl& d : cfg.elements) {
    ElementFactory make = find_element_class(d.cls);
    if (make == nullptr) throw ClickError(d.pos, "unknown element class '" + d.cls + "'");
    std::unique_ptr<Element> e = make();
    e->set_identity(d.name, &g->counters_);
    try {
      Args args(d.args, Args::Options{e->takes_keywords(), env.allow_files});
      e->configure(args);
      args.done();
    } catch (const ConfigError& err) {
      throw ClickError(d.args_pos, where(d) + err.what());
    }
    g->elements_.push_back(std::move(e));
  }

  // 2. Port counts from the connections, checked against each class's range; push outputs connect once.
  std::vector<int> nin(n, 0), nout(n, 0);
  std::vector<std::vector<int>> out_used(n), in_used(n);
  for (const Connection& c : cfg.connections) {
    nout[c.from] = std::max(nout[c.from], c.from_port + 1);
    nin[c.to] = std::max(nin[c.to], c.to_port + 1);
  }
  for (size_t i = 0; i < n; ++i) {
    out_used[i].assign(nout[i], 0);
    in_used[i].assign(nin[i], 0);
  }
  for (const Connection& c : cfg.connections) {
    if (out_used[c.from][c.from_port]++) {
      throw ClickError(c.pos, where(cfg.elements[c.from]) + "output " + std::to_string(c.from_port) +
                                  " is connected more than once (push outputs have one destination)");
    }
    in_used[c.to][c.to_port]++;
  }
  for (size_t i = 0; i < n; ++i) {
    const ElementDecl& d = cfg.elements[i];
    Element& e = *g->elements_[i];
    const PortCountRange ir = e.input_range(), orr = e.output_range();
    if (nin[i] < ir.min || (ir.max >= 0 && nin[i] > ir.max))
      throw ClickError(d.pos, where(d) + "has " + std::to_string(nin[i]) + " input(s) connected, needs " +
                                  range_text(ir));
    if (nout[i] < orr.min || (orr.max >= 0 && nout[i] > orr.max))
      throw ClickError(d.pos, where(d) + "has " + std::to_string(nout[i]) + " output(s) connected, needs " +
                                  range_text(orr));
    for (int k = 0; k < nout[i]; ++k)
      if (!out_used[i][k]) throw ClickError(d.pos, where(d) + "output " + std::to_string(k) + " not connected");
    for (int k = 0; k < nin[i] && !e.sparse_inputs(); ++k)
      if (!in_used[i][k]) throw ClickError(d.pos, where(d) + "input " + std::to_string(k) + " not connected");
    e.set_port_counts(nin[i], nout[i]);
  }
  for (const Connection& c : cfg.connections)
    g->elements_[c.from]->connect_output(c.from_port, g->elements_[c.to].get(), c.to_port);

  // 3. Push processing recurses along edges, so a cycle would recurse forever: reject it.
  std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> finished;     // in the order the search finished them: reversed, a topological order
  std::vector<std::vector<int>> adj(n);
  for (const Connection& c : cfg.connections) adj[c.from].push_back(c.to);
  std::function<void(int)> dfs = [&](int u) {
    state[u] = 1;
    for (int v : adj[u]) {
      if (state[v] == 1)
        throw ClickError(cfg.elements[v].pos,
                         where(cfg.elements[v]) + "is part of a cycle (push paths must be acyclic)");
      if (state[v] == 0) dfs(v);
    }
    state[u] = 2;
    finished.push_back(u);
  };
  for (size_t i = 0; i < n; ++i)
    if (state[i] == 0) dfs(static_cast<int>(i));

  // Elements every frame of which comes as its port delivered it (Element::frames_as_received): fed only by
  // port-frame elements, directly or through elements that change nothing in a frame. The graph is acyclic
  // (checked above): one pass over the elements in a topological order (the cycle search's) decides it.
  {
    std::vector<std::vector<int>> feeders(n);
    for (const Connection& c : cfg.connections) feeders[c.to].push_back(c.from);
    std::vector<char> as_received(n, 0);  // the frames it sends on are as received
    for (auto it = finished.rbegin(); it != finished.rend(); ++it) {
      Element& e = *g->elements_[*it];
      const bool fed_as_received =
          !feeders[*it].empty() &&
          std::all_of(feeders[*it].begin(), feeders[*it].end(), [&](int f) { return as_received[f] != 0; });
      if (fed_as_received) e.frames_as_received();
      as_received[*it] = e.delivers_port_frames() || (fed_as_received && e.passes_frames_unchanged());
    }
  }

  // 4. Initialise (tables, port lookups).
  GraphEnv genv = env;
  genv.find_element = [](void* ctx, const std::string& name) { return static_cast<Graph*>(ctx)->find(name); };
  genv.all_elements = [](void* ctx) {
    std::vector<Element*> all;
    for (const auto& e : static_cast<Graph*>(ctx)->elements_) all.push_back(e.get());
    return all;
  };
  genv.element_ctx = g.get();
  for (size_t i = 0; i < n; ++i) {
    Element& e = *g->elements_[i];
    try {
      e.initialize(genv);
    } catch (const PreconditionError& err) {  // well-formed, but what it needs outside failed (a program)
      throw ClickPreconditionError(cfg.elements[i].pos, err.what());
    } catch (const ResourceError& err) {  // well-formed, but more than this server holds
      throw ClickResourceError(cfg.elements[i].pos, where(cfg.elements[i]) + err.what());
    } catch (const std::exception& err) {  // bad arguments found late, or a table that cannot be allocated
      throw ClickError(cfg.elements[i].pos, where(cfg.elements[i]) + err.what());
    }
    if (e.is_source()) g->sources_.push_back(&e);
    if (cfg.elements[i].cls == "input") g->input_ = &e;
  }
  g->fold_inputs();
  if (env.profile) {
    g->profile_ = std::make_unique<StageProfile>();
    for (const auto& e : g->elements_) {
      const int slot = g->profile_->add_slot(e->name());
      const std::vector<const char*> stages = e->stage_names();
      int first = slot + 1;
      for (const char* s : stages) g->profile_->add_slot(e->name() + "." + s);
      e->set_profile(g->profile_.get(), slot, first);
    }
  }
  return g;
}

// Element::fold_input: an input fed by exactly one element, through its only output, may take that element's place,
// the element running its step. Only an element that something else feeds (a link, which can be redirected; not
// the group's `input` or a source, which the graph and the worker call) is taken over, and only as a whole: every
// link into it now leads to the input that took its place, so it sees no packet and none runs its step twice.
void Graph::fold_inputs() {
  struct Feed {
    Element* from;
    int k;
  };
  std::map<std::pair<const Element*, int>, std::vector<Feed>> into;  // (element, input port) <- the links into it
  auto collect = [&] {
    into.clear();
    for (const auto& u : elements_)
      for (int k = 0; k < u->noutputs(); ++k)
        if (u->output_target(k) != nullptr) into[{u->output_target(k), u->output_target_port(k)}].push_back({u.get(), k});
  };
  collect();
  for (const auto& up : elements_) {
    Element* e = up.get();
    for (int p = 0; p < e->ninputs(); ++p) {
      const auto it = into.find({e, p});
      if (it == into.end() || it->second.size() != 1) continue;
      Element* f = it->second[0].from;
      if (f == e || f == input_ || f->is_source() || f->noutputs() != 1 || f->ninputs() != 1) continue;
      const auto fed = into.find({f, 0});
      if (fed == into.end() || fed->second.empty() || !e->fold_input(p, *f)) continue;
      for (const Feed& u : std::vector<Feed>(fed->second)) u.from->redirect_output(u.k, e, p);
      collect();
    }
  }
}

Element* Graph::find(const std::string& name) const {
  for (const auto& e : elements_)
    if (e->name() == name) return e.get();
  return nullptr;
}

void Graph::report(std::ostream& os) const {
  for (const auto& e : elements_) {
    std::ostringstream one;
    e->report(one);
    std::istringstream lines(one.str());
    for (std::string line; std::getline(lines, line);) os << e->name() << "." << line << "\n";
  }
  os << "graph.drops " << counters_.drops << "\n";
  if (profile_ != nullptr) profile_->report(os);
}

}  // namespace metron
