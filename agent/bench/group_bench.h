// Shared by the benches of the offloaded chain's agent side (group_dispatch_bench, group_latency_bench): the
// trace tagged as the switch tags it, the groups' specs, the Engine's workers run for a while.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "core/group.h"

namespace metron::bench {

// Frame i tagged for group 1 + i % groups (docs/contracts.md#tags: dst MAC bytes 2-3 the tag, 4-5 the class id).
inline void tag_frames(std::vector<std::vector<uint8_t>>* frames, unsigned groups) {
  for (size_t i = 0; i < frames->size(); ++i) {
    uint8_t* f = (*frames)[i].data();
    const uint16_t tag = static_cast<uint16_t>(1 + i % groups);
    f[0] = 0x02, f[1] = 0x4d, f[2] = tag >> 8, f[3] = tag & 0xff, f[4] = tag >> 8, f[5] = tag & 0xff;
  }
}

// A group's flow table: twice its flows (each frame of the trace is one flow), a power of two, at least 1024.
inline uint32_t group_capacity(size_t frames, unsigned groups) {
  uint32_t capacity = 1024;
  while (capacity < 2 * frames / groups) capacity *= 2;
  return capacity;
}

// Group g of a bench: tag and class id g + 1, running `click` on `core` (slot `slot` of `slots`: the rx and tx
// queue it uses), fed by `in`, sending to `out` with a rewritten destination MAC.
inline GroupRuntime::Spec group_spec(unsigned g, const std::string& click, unsigned core, unsigned slot,
                                     unsigned slots, Port* in, Port* out) {
  GroupRuntime::Spec spec;
  spec.pipeline_id = "bench";
  spec.group_id = "g" + std::to_string(g + 1);
  spec.click = click;
  spec.tag_kind = TagKind::kMac;
  spec.tag = g + 1;
  spec.core = core;
  spec.slot = slot;
  spec.slots = slots;
  spec.ingress = in;
  EgressTarget e;
  e.port = out;
  e.set_dst_mac = true;
  std::memcpy(e.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
  spec.egress.push_back(e);
  spec.class_ids = {g + 1};
  return spec;
}

// Runs the engine's workers (the one on this thread's main lcore here) for `secs` seconds, stopped by a timer.
inline void run_for(Engine& engine, double secs) {
  engine.start();
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    engine.request_stop();
  });
  engine.run_main_worker();
  timer.join();
  engine.stop();
}

}  // namespace metron::bench
