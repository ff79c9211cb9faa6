// Graph: the elements of one Click configuration, instantiated for one core, wired and initialised.
// Built entirely off the data path (parse, configure, allocate tables); a worker then only calls
// push_input()/run_sources(). Destroying a graph frees every table it allocated.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/click_ast.h"
#include "core/element.h"

namespace metron {

class Graph {
 public:
  // Throws ClickError: "line:col: <what>" for syntax errors, unknown classes, bad arguments (prefixed with
  // "element 'name' (Class): "), port-count and connection errors. Nothing is left allocated on failure.
  static std::unique_ptr<Graph> build(const ClickConfig& cfg, const GraphEnv& env);
  static std::unique_ptr<Graph> build(const std::string& text, const GraphEnv& env);
  ~Graph();

  // Group graphs: packets of the group enter at `input`. Without an `input`, they are dropped.
  // Where `input` sends its batches (after folds): the element and its input port; null if nothing.
  struct Target {
    Element* e = nullptr;
    int port = 0;
  };
  Target input_target() const {
    if (input_ == nullptr || input_->noutputs() < 1) return {};
    return {input_->output_target(0), input_->output_target_port(0)};
  }
  void push_input(PacketBatch& b) {
    if (input_ != nullptr)
      input_->push(0, b);
    else
      drop_all(b);
  }
  // Standalone graphs: polls every source (FromDevice) once; returns packets received.
  unsigned run_sources() {
    unsigned n = 0;
    if (__builtin_expect(profile_ != nullptr, 0)) {
      for (Element* s : sources_) {
        profile_->enter(s->profile_slot(), 0);
        n += s->run_source();
        profile_->leave();
      }
      return n;
    }
    for (Element* s : sources_) n += s->run_source();
    return n;
  }
  bool has_sources() const { return !sources_.empty(); }

  Element* find(const std::string& name) const;
  const std::vector<std::unique_ptr<Element>>& elements() const { return elements_; }
  uint64_t drops() const { return counters_.drops; }
  const GraphCounters& counters() const { return counters_; }
  // The graph's StageProfile when built with GraphEnv::profile, else null.
  StageProfile* profile() const { return profile_.get(); }
  // Per-element counters, one "name.key value" line each (standalone exit report), then the profile's lines when
  // the graph was built with GraphEnv::profile.
  void report(std::ostream& os) const;

 private:
  Graph() = default;
  void fold_inputs();  // Element::fold_input, once the graph is initialised
  void drop_all(PacketBatch& b) {
    counters_.drops += b.n;
    b.free_all();
  }
  GraphCounters counters_;
  std::unique_ptr<StageProfile> profile_;
  std::vector<std::unique_ptr<Element>> elements_;
  std::vector<Element*> sources_;
  Element* input_ = nullptr;
};

}  // namespace metron
