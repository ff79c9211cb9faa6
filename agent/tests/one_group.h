// The DeployPipeline most engine tests start with: pipeline "p" reading `in` and sending to `out`, with one
// group "g<tag>" running `click` on `core`.
#pragma once

#include <string>

#include "core/port.h"
#include "metron/agent/v1/agent.pb.h"

namespace metron::test {

inline ::metron::agent::v1::DeployPipelineRequest OneGroupPipeline(const Port& in, const Port& out,
                                                                   const std::string& click, unsigned core,
                                                                   uint32_t tag = 7,
                                                                   ::metron::agent::v1::TagType type =
                                                                       ::metron::agent::v1::TAG_MAC) {
  namespace pb = ::metron::agent::v1;
  pb::DeployPipelineRequest r;
  r.set_pipeline_id("p");
  r.set_ingress_nic(in.name());
  pb::Egress* e = r.add_egress();
  e->set_nic(out.name());
  e->set_dst_mac("aa:bb:cc:dd:ee:ff");
  pb::GroupSpec* g = r.add_groups();
  g->set_group_id("g" + std::to_string(tag));
  g->set_click_config(click);
  g->mutable_tag()->set_type(type);
  g->mutable_tag()->set_value(tag);
  g->set_core(core);
  return r;
}

}  // namespace metron::test
