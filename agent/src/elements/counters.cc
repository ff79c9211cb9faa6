// Counting and discarding: Counter, AverageCounter, Discard.
#include <rte_cycles.h>

#include "core/element.h"

namespace metron {

namespace {

class Counter : public Element {
 public:
  const char* class_name() const override { return "Counter"; }
  void configure(Args& args) override {
    // FastClick's NO_RATE and Click's CALL handlers: accepted, not used.
    args.take("NO_RATE");
  }
  void push(int, PacketBatch& b) override {
    count_ += b.n;
    for (uint16_t i = 0; i < b.n; ++i) bytes_ += rte_pktmbuf_pkt_len(b.pkts[i]);
    if (count_ == b.n) first_tsc_ = rte_rdtsc();
    last_tsc_ = rte_rdtsc();
    output_push(0, b);
  }
  void report(std::ostream& os) const override {
    os << "count " << count_ << "\nbyte_count " << bytes_ << "\n";
  }
  uint64_t count() const { return count_; }

 protected:
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  uint64_t first_tsc_ = 0;
  uint64_t last_tsc_ = 0;
};

// Counter plus the average rate between the first and the last packet.
class AverageCounter final : public Counter {
 public:
  const char* class_name() const override { return "AverageCounter"; }
  void configure(Args& args) override {
    args.take("IGNORE");
    Counter::configure(args);
  }
  void report(std::ostream& os) const override {
    Counter::report(os);
    const double secs = static_cast<double>(last_tsc_ - first_tsc_) / static_cast<double>(rte_get_tsc_hz());
    const double rate = secs > 0 ? static_cast<double>(count_) / secs : 0.0;
    os << "rate " << rate << "\nbit_rate " << (secs > 0 ? static_cast<double>(bytes_) * 8 / secs : 0.0) << "\n";
  }
};

class Discard final : public Element {
 public:
  const char* class_name() const override { return "Discard"; }
  PortCountRange input_range() const override { return {1, -1}; }
  PortCountRange output_range() const override { return {0, 0}; }
  void configure(Args& args) override { args.take("ACTIVE"); args.take("BURST"); }
  void push(int, PacketBatch& b) override {
    count_ += b.n;
    drop_all(b);
  }
  void report(std::ostream& os) const override { os << "count " << count_ << "\n"; }

 private:
  uint64_t count_ = 0;
};

}  // namespace

METRON_EXPORT_ELEMENT(Counter)
METRON_EXPORT_ELEMENT(AverageCounter)
METRON_EXPORT_ELEMENT(Discard)

}  // namespace metron
