// libFuzzer target for everything the control API accepts from the network before the backend sees it:
// request validation, NIC rule parsing, the kernel steering programs and rte_flow rules built from any rule
// that validates, and the testpmd syntax. Besides "never crashes", it checks two properties on every input:
//   - a rule that ParseNicRule accepts compiles (or is refused with a status, never undefined behaviour), and
//   - printing such a rule in testpmd syntax and parsing it back gives the same rule.
// First input byte picks the request type; the rest is that protobuf message's wire format (or, for type 0, a
// testpmd line).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "control/request_validation.h"
#include "dispatch/cbpf_program.h"
#include "dispatch/rte_flow_rules.h"
#include "dispatch/steer_rule.h"
#include "dispatch/testpmd_flow_syntax.h"

namespace {

using namespace metron;

void CheckRule(const SteerRule& r) {
  std::vector<sock_filter> program;
  CompileSteeringProgram({r}, 0, ProgramRole::kFanout, &program);
  CompileSteeringProgram({r}, 0, ProgramRole::kSocketFilter, &program);
  std::unique_ptr<RteFlowRule> flow;
  RteFlowRule::Build(r, 0, &flow);
  if (r.action.kind == SteerActionKind::kMark) return;  // prints with the default queue; not a round trip
  SteerRule back;
  grpc::Status s = ParseTestpmd(ToTestpmd(r, 0, 0), r.nic, r.id, &back, nullptr);
  if (!s.ok() || ToProto(back).SerializeAsString() != ToProto(r).SerializeAsString()) {
    std::fprintf(stderr, "testpmd round trip failed: %s\n%s\n", ToTestpmd(r, 0, 0).c_str(), s.error_message().c_str());
    std::abort();
  }
}

template <typename Msg>
bool Parse(const uint8_t* data, size_t size, Msg* m) {
  return m->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 in string fields is expected here, not news
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0] % 6;
  ++data, --size;
  switch (kind) {
    case 0: {
      SteerRule r;
      if (ParseTestpmd(std::string(reinterpret_cast<const char*>(data), size), "eth0", 1, &r, nullptr).ok()) {
        CheckRule(r);
      }
      break;
    }
    case 1: {
      pb::NicRuleBatch m;
      if (!Parse(data, size, &m)) return 0;
      if (!ValidateRequest(m).ok()) return 0;
      std::vector<SteerRule> rules;
      for (int i = 0; i < m.rules_size(); ++i) {
        SteerRule r;
        if (!ParseNicRule(m.rules(i), "r", &r).ok()) std::abort();  // validated above: must parse
        CheckRule(r);
        rules.push_back(r);
      }
      std::vector<sock_filter> program;
      CompileSteeringProgram(rules, 0, ProgramRole::kFanout, &program);
      break;
    }
    case 2: {
      pb::DeployPipelineRequest m;
      if (Parse(data, size, &m)) ValidateRequest(m);
      break;
    }
    case 3: {
      pb::UpdatePipelineRequest m;
      if (Parse(data, size, &m)) ValidateRequest(m);
      break;
    }
    case 4: {
      pb::ImportStateRequest m;
      if (Parse(data, size, &m)) ValidateRequest(m);
      break;
    }
    case 5: {
      pb::LoadStreamRequest m;
      std::chrono::milliseconds ms;
      if (Parse(data, size, &m)) LoadInterval(m, &ms);
      break;
    }
  }
  return 0;
}
