// VmdqDispatcher: tag -> queue dispatch by a NIC's VMDq MAC pools (DISPATCH_VMDQ, agent --vmdq), for NICs that
// have VMDq (ixgbe 82599/X540/X550, i40e). The port runs in RTE_ETH_MQ_RX_VMDQ_ONLY with one pool per worker
// slot (drivers/vmdq_conf.h, dispatch/vmdq_port.h); this class keeps the NIC's MAC table equal to the entries
// vmdq_pools.h computes from the SteeringTable's rule list: removals first (a moved class's MAC is in one pool
// at a time), then additions, and a NIC that refuses one is put back to the previous entries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/dispatcher.h"
#include "dispatch/vmdq_pools.h"

namespace metron {

// The calls VMDq dispatch makes on its port, narrow so that the sequence a change makes can be recorded in tests
// (no PMD on the development machine has VMDq). The real one is EthdevMacOps (vmdq_port.h).
class VmdqMacOps {
 public:
  virtual ~VmdqMacOps() = default;
  // 0 or a negative errno, as rte_eth_dev_mac_addr_add / rte_eth_dev_mac_addr_remove. `slot`: the worker slot
  // whose pool gets the MAC.
  virtual int add(const MacAddr& mac, uint16_t slot) = 0;
  virtual int remove(const MacAddr& mac) = 0;
  // Frames waiting in worker slot `slot`'s rx queue; negative when the driver cannot tell.
  virtual int backlog(uint16_t slot) = 0;
};

class VmdqDispatcher final : public Dispatcher {
 public:
  // `pools`: worker slots (one pool each); `mac_entries`: MAC table entries for class MACs.
  VmdqDispatcher(std::string nic, uint16_t pools, uint32_t mac_entries, std::unique_ptr<VmdqMacOps> ops);
  ~VmdqDispatcher() override;  // removes the entries it added
  VmdqDispatcher(const VmdqDispatcher&) = delete;
  VmdqDispatcher& operator=(const VmdqDispatcher&) = delete;

  const std::string& nic() const override { return nic_; }
  pb::DispatchMode mode() const override { return pb::DISPATCH_VMDQ; }
  uint16_t steerable_queues() const override { return pools_; }
  // A rule takes at least one MAC entry (a group tag one per class), so no more rules than entries fit.
  uint32_t max_rules() const override { return mac_entries_; }
  grpc::Status check(const std::vector<SteerRule>& ordered_rules) const override;
  // After the MAC table changed, waits (at most kDrainWait) until the pools that lost a MAC have no frame left in
  // their queue, so a group moved off a core can be retired there without losing its backlog.
  grpc::Status apply(const std::vector<SteerRule>& ordered_rules) override;

  // Whether the NIC really takes pool MACs: adds and removes one class MAC in the last pool. Run at startup, before
  // handing the dispatcher to a SteeringTable, so a port that cannot is refused there.
  grpc::Status probe();

  const std::vector<VmdqEntry>& entries() const { return entries_; }

 private:
  // Applies `change` to the NIC; on a refusal undoes what it did and names the MAC, the pool and the reason.
  grpc::Status write(const VmdqChange& change);
  grpc::Status refused(const char* step, const VmdqEntry& e, int rc) const;

  const std::string nic_;
  const uint16_t pools_;
  const uint32_t mac_entries_;
  std::unique_ptr<VmdqMacOps> ops_;
  std::vector<VmdqEntry> entries_;  // what the NIC holds, sorted by MAC
};

}  // namespace metron
