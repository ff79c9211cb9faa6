// The element classes this agent knows, by Click name. One line per class; aliases point at the same factory.
#include <algorithm>
#include <map>

#include "core/element.h"

namespace metron {

#define METRON_ELEMENT_FACTORIES(X)                                                                         \
  X(FromDevice) X(ToDevice) X(GroupInput) X(GroupOutput) X(Counter) X(AverageCounter) X(Discard) X(Strip)   \
  X(Unstrip) X(EtherEncap) X(EtherRewrite) X(StoreEtherAddress) X(VLANEncap) X(VLANDecap) X(CheckIPHeader) X(MarkIPHeader)       \
  X(DecIPTTL) X(SetIPChecksum) X(Classifier) X(IPFilter) X(IPClassifier) \
  X(SynthRewriter) X(IPRewriter) X(IPRewriterPatterns) X(RoundRobinIPMapper) X(MaglevIPMapper) X(LookupIPRoute) X(HyperscanDPI) \
  X(SpinCycles) X(BlackBoxNF)

#define METRON_DECLARE_FACTORY(Cls) std::unique_ptr<Element> make_element_##Cls();
METRON_ELEMENT_FACTORIES(METRON_DECLARE_FACTORY)

namespace {
const std::map<std::string, ElementFactory>& classes() {
  static const std::map<std::string, ElementFactory> m = {
      {"FromDevice", make_element_FromDevice},
      {"FromDPDKDevice", make_element_FromDevice},
      {"ToDevice", make_element_ToDevice},
      {"ToDPDKDevice", make_element_ToDevice},
      {"input", make_element_GroupInput},
      {"output", make_element_GroupOutput},
      {"Counter", make_element_Counter},
      {"AverageCounter", make_element_AverageCounter},
      {"Discard", make_element_Discard},
      {"Strip", make_element_Strip},
      {"Unstrip", make_element_Unstrip},
      {"EtherEncap", make_element_EtherEncap},
      {"EtherRewrite", make_element_EtherRewrite},
      {"StoreEtherAddress", make_element_StoreEtherAddress},
      {"VLANEncap", make_element_VLANEncap},
      {"VLANDecap", make_element_VLANDecap},
      {"CheckIPHeader", make_element_CheckIPHeader},
      {"MarkIPHeader", make_element_MarkIPHeader},
      {"DecIPTTL", make_element_DecIPTTL},
      {"SetIPChecksum", make_element_SetIPChecksum},
      {"Classifier", make_element_Classifier},
      {"IPFilter", make_element_IPFilter},
      {"IPClassifier", make_element_IPClassifier},
      {"SynthRewriter", make_element_SynthRewriter},
      {"IPRewriter", make_element_IPRewriter},
      {"IPRewriterPatterns", make_element_IPRewriterPatterns},
      {"RoundRobinIPMapper", make_element_RoundRobinIPMapper},
      {"MaglevIPMapper", make_element_MaglevIPMapper},
      {"LookupIPRoute", make_element_LookupIPRoute},
      {"BlackBoxNF", make_element_BlackBoxNF},
      {"HyperscanDPI", make_element_HyperscanDPI},
      {"SpinCycles", make_element_SpinCycles},
  };
  return m;
}
}  // namespace

ElementFactory find_element_class(const std::string& name) {
  auto it = classes().find(name);
  return it == classes().end() ? nullptr : it->second;
}

std::vector<std::string> element_class_names() {
  std::vector<std::string> names;
  for (const auto& [n, f] : classes()) names.push_back(n);
  return names;
}

}  // namespace metron
