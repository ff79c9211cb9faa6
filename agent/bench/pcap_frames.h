// The frames of a pcap file (classic format, as gen_traffic.py writes it), for benchmarks that feed a graph or a
// library from the bench traces without a pcap vdev, and back (write_pcap: a bench's own trace for ReplayPort).
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

// The frames `which` of `frames` as a classic pcap file (microsecond stamps).
inline void write_pcap(const std::string& out, const std::vector<std::vector<uint8_t>>& frames,
                       const std::vector<uint32_t>& which) {
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  const uint32_t header[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};
  f.write(reinterpret_cast<const char*>(header), sizeof header);
  for (uint32_t i : which) {
    const std::vector<uint8_t>& fr = frames[i];
    const uint32_t rec[4] = {0, 0, static_cast<uint32_t>(fr.size()), static_cast<uint32_t>(fr.size())};
    f.write(reinterpret_cast<const char*>(rec), sizeof rec);
    f.write(reinterpret_cast<const char*>(fr.data()), static_cast<std::streamsize>(fr.size()));
  }
  if (!f) throw std::runtime_error("cannot write " + out);
}

}  // namespace metron::bench
