// A KERNEL-mode black-box NF's network namespace (docs/blackbox.md): the kernel between two of the agent's ports.
//
//   agent: net_af_packet on <base>i  --veth-->  NS: in ─┐
//                                                       br0 (bridge, no learning: every frame floods to the other port)
//   agent: net_af_packet on <base>o  <--veth--  NS: out ─┘
//
// Frames the agent sends on <base>i cross the namespace's bridge (the NF's nftables rules in the bridge family
// see them: `hook forward`) and come back on <base>o unchanged unless the NF rewrote or dropped them. IPv6 is off
// on every interface so the kernel adds no frames of its own. The object owns all of it: its destructor closes the
// ports and deletes the namespace (which takes its veth ends, and so the agent's, with it).
#pragma once

#include <memory>
#include <string>

struct rte_mempool;

namespace metron {

class DpdkPort;

class KernelNs {
 public:
  // Creates namespace `ns` and the agent-side interfaces `base`+"i"/"o" (base at most 13 characters), then opens
  // the two af_packet ports with mbufs from `pool`. Throws std::runtime_error naming the failing step.
  KernelNs(const std::string& ns, const std::string& base, rte_mempool* pool);
  ~KernelNs();
  KernelNs(const KernelNs&) = delete;
  KernelNs& operator=(const KernelNs&) = delete;

  const std::string& name() const { return ns_; }
  DpdkPort& to_nf() { return *in_; }      // the agent transmits here
  DpdkPort& from_nf() { return *out_; }   // and receives what the namespace gives back here
  // A file descriptor of the namespace (for setns), or -1 if it is gone; the caller closes it.
  int open_fd() const;
  // False once the namespace or one of its links is gone (deleted from outside, `ip netns del`).
  bool alive() const;

 private:
  void remove() noexcept;
  std::string ns_, base_;
  std::unique_ptr<DpdkPort> in_, out_;
};

}  // namespace metron
