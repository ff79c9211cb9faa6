#include "core/strip_fold.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace metron {

namespace {

// Elements that find the IP header through CheckIPHeader's annotation (core/annotations.h: its absolute
// position in the buffer) and never through the data start or the packet's length: whether the Ethernet header
// was stripped before them changes nothing they read or write.
const std::set<std::string> kOffsetFree = {"SynthRewriter", "IPRewriter", "DecIPTTL", "IPFilter", "IPClassifier"};

bool is_length(const std::string& s) {
  return !s.empty() && s.size() <= 4 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<const Connection*> into(const ClickConfig& cfg, int e) {
  std::vector<const Connection*> v;
  for (const Connection& c : cfg.connections)
    if (c.to == e) v.push_back(&c);
  return v;
}
std::vector<const Connection*> out_of(const ClickConfig& cfg, int e) {
  std::vector<const Connection*> v;
  for (const Connection& c : cfg.connections)
    if (c.from == e) v.push_back(&c);
  return v;
}

// What folding Strip `s` removes: its Unstrips; empty when `s` cannot be folded. Sets *check to its CheckIPHeader.
std::vector<int> foldable(const ClickConfig& cfg, int s, int* check) {
  const ElementDecl& sd = cfg.elements[s];
  if (sd.cls != "Strip" || sd.args.size() != 1 || !is_length(sd.args[0])) return {};
  const std::vector<const Connection*> so = out_of(cfg, s);
  if (so.size() != 1 || so[0]->from_port != 0) return {};
  const int c = so[0]->to;
  const ElementDecl& cd = cfg.elements[c];
  if (cd.cls != "CheckIPHeader" || !cd.args.empty() || into(cfg, c).size() != 1) return {};
  const std::vector<const Connection*> co = out_of(cfg, c);
  if (co.size() != 1 || co[0]->from_port != 0) return {};  // output 1 (bad packets) must stay unconnected
  // Every path from the CheckIPHeader: offset-free elements up to an Unstrip of the same length.
  std::set<int> region, unstrips;
  std::vector<int> todo = {co[0]->to};
  while (!todo.empty()) {
    const int x = todo.back();
    todo.pop_back();
    if (region.count(x) || unstrips.count(x)) continue;
    const ElementDecl& xd = cfg.elements[x];
    if (xd.cls == "Unstrip" && xd.args.size() == 1 && xd.args[0] == sd.args[0]) {
      if (out_of(cfg, x).size() != 1) return {};
      unstrips.insert(x);
      continue;
    }
    if (!kOffsetFree.count(xd.cls)) return {};
    region.insert(x);
    for (const Connection* o : out_of(cfg, x)) todo.push_back(o->to);
  }
  // Nothing from outside reaches the region or its Unstrips (its packets would not have been stripped).
  for (int x : region)
    for (const Connection* i : into(cfg, x))
      if (i->from != c && !region.count(i->from)) return {};
  for (int u : unstrips)
    for (const Connection* i : into(cfg, u))
      if (i->from != c && !region.count(i->from)) return {};
  *check = c;
  return std::vector<int>(unstrips.begin(), unstrips.end());
}

// Folds Strip `s` (foldable): CheckIPHeader `c` takes its length as offset, what fed the Strip feeds it, what
// fed each Unstrip feeds what the Unstrip fed; the Strip and the Unstrips are removed.
void fold(ClickConfig& cfg, int s, int c, const std::vector<int>& unstrips) {
  cfg.elements[c].args = {cfg.elements[s].args[0]};
  std::vector<Connection> kept;
  for (const Connection& k : cfg.connections) {
    if (k.from == s) continue;  // Strip -> CheckIPHeader
    if (std::count(unstrips.begin(), unstrips.end(), k.from)) continue;  // Unstrip -> next: joined below
    Connection n = k;
    if (n.to == s) n.to = c, n.to_port = 0;
    const auto u = std::find(unstrips.begin(), unstrips.end(), n.to);
    if (u != unstrips.end()) {
      const Connection* next = out_of(cfg, *u)[0];
      n.to = next->to;
      n.to_port = next->to_port;
    }
    kept.push_back(n);
  }
  // Drop the removed elements and renumber the connections' ends.
  std::vector<int> gone = unstrips;
  gone.push_back(s);
  std::vector<int> index(cfg.elements.size(), -1);
  std::vector<ElementDecl> elements;
  for (size_t i = 0; i < cfg.elements.size(); ++i) {
    if (std::count(gone.begin(), gone.end(), static_cast<int>(i))) continue;
    index[i] = static_cast<int>(elements.size());
    elements.push_back(cfg.elements[i]);
  }
  for (Connection& k : kept) k.from = index[k.from], k.to = index[k.to];
  cfg.elements = std::move(elements);
  cfg.connections = std::move(kept);
}

}  // namespace

ClickConfig fold_strips(const ClickConfig& in) {
  ClickConfig cfg = in;
  for (bool again = true; again;) {
    again = false;
    for (size_t s = 0; s < cfg.elements.size() && !again; ++s) {
      int c = -1;
      const std::vector<int> unstrips = foldable(cfg, static_cast<int>(s), &c);
      if (unstrips.empty()) continue;
      fold(cfg, static_cast<int>(s), c, unstrips);
      again = true;  // indices changed: look again from the start
    }
  }
  return cfg;
}

}  // namespace metron
