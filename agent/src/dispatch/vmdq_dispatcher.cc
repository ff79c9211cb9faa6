#include "dispatch/vmdq_dispatcher.h"

#include <rte_errno.h>

#include <chrono>
#include <set>
#include <thread>

namespace metron {

namespace {

// Bounded: a pool whose worker does not read (a stopped engine) must not hang the control path.
constexpr auto kDrainWait = std::chrono::milliseconds(100);

}  // namespace

VmdqDispatcher::VmdqDispatcher(std::string nic, uint16_t pools, uint32_t mac_entries, std::unique_ptr<VmdqMacOps> ops)
    : nic_(std::move(nic)), pools_(pools), mac_entries_(mac_entries), ops_(std::move(ops)) {}

VmdqDispatcher::~VmdqDispatcher() {
  for (const VmdqEntry& e : entries_) ops_->remove(e.mac);
}

grpc::Status VmdqDispatcher::check(const std::vector<SteerRule>& ordered_rules) const {
  std::vector<VmdqEntry> next;
  return VmdqEntries(nic_, ordered_rules, pools_, mac_entries_, &next);
}

grpc::Status VmdqDispatcher::refused(const char* step, const VmdqEntry& e, int rc) const {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "NIC " + nic_ + " refused to " + step + " class MAC " + FormatMac(e.mac) + " (pool of worker slot " +
                          std::to_string(e.pool) + "): " + rte_strerror(rc < 0 ? -rc : rc));
}

grpc::Status VmdqDispatcher::write(const VmdqChange& change) {
  size_t removed = 0, added = 0;
  int rc = 0;
  for (; removed < change.remove.size(); ++removed)
    if ((rc = ops_->remove(change.remove[removed].mac)) != 0) break;
  if (rc == 0)
    for (; added < change.add.size(); ++added)
      if ((rc = ops_->add(change.add[added].mac, change.add[added].pool)) != 0) break;
  if (rc == 0) return grpc::Status::OK;
  const grpc::Status s = removed < change.remove.size() ? refused("remove", change.remove[removed], rc)
                                                        : refused("add", change.add[added], rc);
  // Back to the entries in force before: what was added goes, what was removed comes back.
  for (size_t i = 0; i < added; ++i) ops_->remove(change.add[i].mac);
  for (size_t i = 0; i < removed; ++i) ops_->add(change.remove[i].mac, change.remove[i].pool);
  return s;
}

grpc::Status VmdqDispatcher::apply(const std::vector<SteerRule>& ordered_rules) {
  std::vector<VmdqEntry> next;
  grpc::Status s = VmdqEntries(nic_, ordered_rules, pools_, mac_entries_, &next);
  if (!s.ok()) return s;
  const VmdqChange change = VmdqDiff(entries_, next);
  if (!(s = write(change)).ok()) return s;
  entries_ = std::move(next);
  std::set<uint16_t> losing;
  for (const VmdqEntry& e : change.remove) losing.insert(e.pool);
  const auto deadline = std::chrono::steady_clock::now() + kDrainWait;
  for (uint16_t pool : losing)
    while (ops_->backlog(pool) > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  return grpc::Status::OK;
}

grpc::Status VmdqDispatcher::probe() {
  const VmdqEntry e{ClassMac(1, 0), static_cast<uint16_t>(pools_ - 1)};
  if (int rc = ops_->add(e.mac, e.pool); rc != 0) return refused("add", e, rc);
  if (int rc = ops_->remove(e.mac); rc != 0) return refused("remove", e, rc);
  return grpc::Status::OK;
}

}  // namespace metron
