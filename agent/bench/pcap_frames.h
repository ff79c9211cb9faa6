// The frames of a pcap file (classic format, as gen_traffic.py writes it), for benchmarks that feed a graph or a
// library from the bench traces without a pcap vdev.
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace metron::bench {

inline std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  char header[24];
  if (!in.read(header, sizeof header)) throw std::runtime_error(path + ": not a pcap file");
  std::vector<std::vector<uint8_t>> frames;
  uint32_t rec[4];  // seconds, microseconds, captured length, original length
  while (in.read(reinterpret_cast<char*>(rec), sizeof rec)) {
    std::vector<uint8_t> f(rec[2]);
    if (!in.read(reinterpret_cast<char*>(f.data()), rec[2])) throw std::runtime_error(path + ": truncated record");
    frames.push_back(std::move(f));
  }
  return frames;
}

}  // namespace metron::bench
