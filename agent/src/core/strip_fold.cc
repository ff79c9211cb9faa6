#include "core/strip_fold.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "utils/args.h"

namespace metron {

namespace {

// Elements that find the IP header through CheckIPHeader's annotation (core/annotations.h: its absolute
// position in the buffer) and never through the data start or the packet's length: whether the Ethernet header
// was stripped before them changes nothing they read or write.
const std::set<std::string> kOffsetFree = {"SynthRewriter", "IPRewriter", "DecIPTTL", "IPFilter", "IPClassifier"};

bool is_length(const std::string& s) {
  return !s.empty() && s.size() <= 4 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Each element's incoming and outgoing connections, built once: a classifying group has thousands of them.
struct Adjacency {
  std::vector<std::vector<const Connection*>> in, out;
  explicit Adjacency(const ClickConfig& cfg) : in(cfg.elements.size()), out(cfg.elements.size()) {
    for (const Connection& c : cfg.connections) {
      out[c.from].push_back(&c);
      in[c.to].push_back(&c);
    }
  }
};

// Whether a CheckIPHeader's arguments give it no offset: keywords only (CHECKSUM, VERBOSE, DETAILS; FastClick
// configurations often say CHECKSUM false), none of them OFFSET. The fold gives it the Strip's length as its one
// positional argument and keeps the keywords.
bool without_offset(const std::vector<std::string>& args) {
  return std::all_of(args.begin(), args.end(), [](const std::string& a) {
    const std::string k = split_keyword(a).keyword;
    return !k.empty() && k != "OFFSET";
  });
}

// A Strip that can head a fold: its one output goes to a CheckIPHeader without an offset whose only input it
// is and whose output 1 (bad packets) is unconnected. That CheckIPHeader, or -1.
int check_after(const ClickConfig& cfg, const Adjacency& adj, int s) {
  const ElementDecl& sd = cfg.elements[s];
  if (sd.cls != "Strip" || sd.args.size() != 1 || !is_length(sd.args[0])) return -1;
  const auto& so = adj.out.at(s);
  if (so.size() != 1 || so[0]->from_port != 0) return -1;
  const int c = so[0]->to;
  const ElementDecl& cd = cfg.elements[c];
  if (cd.cls != "CheckIPHeader" || !without_offset(cd.args) || adj.in.at(c).size() != 1) return -1;
  const auto& co = adj.out.at(c);
  if (co.size() != 1 || co[0]->from_port != 0) return -1;
  return c;
}

// The Strips (with their CheckIPHeaders) and Unstrips one fold removes.
struct Fold {
  std::map<int, int> check_of;  // Strip -> its CheckIPHeader
  std::set<int> unstrips;
};

// The fold headed by Strip `seed`, or an empty one. The offset-free elements after its CheckIPHeader (the region)
// may also be fed by other Strip/CheckIPHeader pairs of the same length (a rewriter's forward and reply inputs):
// they join the fold. Anything else feeding the region or its Unstrips, or any other element on the way,
// leaves the configuration as written.
Fold foldable(const ClickConfig& cfg, const Adjacency& adj, int seed) {
  Fold f;
  const int c0 = check_after(cfg, adj, seed);
  if (c0 < 0) return {};
  const std::string& len = cfg.elements[seed].args[0];
  f.check_of[seed] = c0;
  std::set<int> checks = {c0}, region;
  std::vector<int> todo = {adj.out.at(c0)[0]->to};
  while (!todo.empty()) {
    const int x = todo.back();
    todo.pop_back();
    if (region.count(x) || f.unstrips.count(x)) continue;
    const ElementDecl& xd = cfg.elements[x];
    if (xd.cls == "Unstrip" && xd.args.size() == 1 && xd.args[0] == len) {
      if (adj.out.at(x).size() != 1) return {};
      f.unstrips.insert(x);
      continue;
    }
    if (!kOffsetFree.count(xd.cls)) return {};
    region.insert(x);
    for (const Connection* o : adj.out.at(x)) todo.push_back(o->to);
  }
  // What feeds the region: the region, the fold's CheckIPHeaders, or another pair, which joins the fold (its
  // CheckIPHeader's one output is into the region, so the region stays as found).
  for (int x : region) {
    for (const Connection* i : adj.in.at(x)) {
      if (region.count(i->from) || checks.count(i->from)) continue;
      const auto& in = adj.in.at(i->from);
      const int s2 = in.size() == 1 ? in[0]->from : -1;
      if (s2 < 0 || check_after(cfg, adj, s2) != i->from || cfg.elements[s2].args[0] != len) return {};
      f.check_of[s2] = i->from;
      checks.insert(i->from);
    }
  }
  for (int u : f.unstrips)
    for (const Connection* i : adj.in.at(u))
      if (!region.count(i->from) && !checks.count(i->from)) return {};
  return f;
}

// Applies a fold: each CheckIPHeader takes the length as offset, what fed its Strip feeds it, what fed each
// Unstrip feeds what the Unstrip fed; the Strips and Unstrips are removed.
void fold(ClickConfig& cfg, const Adjacency& adj, const Fold& f) {
  for (const auto& [s, c] : f.check_of) {
    std::vector<std::string>& args = cfg.elements[c].args;
    args.insert(args.begin(), cfg.elements[s].args[0]);
  }
  std::vector<Connection> kept;
  for (const Connection& k : cfg.connections) {
    if (f.check_of.count(k.from) || f.unstrips.count(k.from)) continue;  // Strip -> CheckIPHeader, Unstrip -> next
    Connection n = k;
    // Through removed elements to the one that stays: an Unstrip's next may be the Strip of the next pair
    // (FastClick-style chains strip and unstrip around each NF).
    for (;;) {
      if (f.unstrips.count(n.to)) {
        const Connection* next = adj.out.at(n.to)[0];
        n.to = next->to;
        n.to_port = next->to_port;
      } else if (f.check_of.count(n.to)) {
        n.to = f.check_of.at(n.to), n.to_port = 0;
      } else {
        break;
      }
    }
    kept.push_back(n);
  }
  // Drop the removed elements and renumber the connections' ends.
  std::vector<int> index(cfg.elements.size(), -1);
  std::vector<ElementDecl> elements;
  for (size_t i = 0; i < cfg.elements.size(); ++i) {
    const int e = static_cast<int>(i);
    if (f.check_of.count(e) || f.unstrips.count(e)) continue;
    index[i] = static_cast<int>(elements.size());
    elements.push_back(cfg.elements[i]);
  }
  for (Connection& k : kept) k.from = index[k.from], k.to = index[k.to];
  cfg.elements = std::move(elements);
  cfg.connections = std::move(kept);
}

}  // namespace

ClickConfig fold_strips(const ClickConfig& in) {
  // The folds are disjoint (a region fed by two pairs is one fold): found on the configuration as written, applied
  // at once.
  const Adjacency adj(in);
  Fold all;
  for (size_t s = 0; s < in.elements.size(); ++s) {
    if (in.elements[s].cls != "Strip" || all.check_of.count(static_cast<int>(s))) continue;
    const Fold f = foldable(in, adj, static_cast<int>(s));
    all.check_of.insert(f.check_of.begin(), f.check_of.end());
    all.unstrips.insert(f.unstrips.begin(), f.unstrips.end());
  }
  ClickConfig cfg = in;
  if (!all.check_of.empty()) fold(cfg, adj, all);
  return cfg;
}

}  // namespace metron
