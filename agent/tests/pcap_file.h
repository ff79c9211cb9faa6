// Test helper: pcap files of whole frames, as the pcap vdev (net_pcap) reads (rx_pcap) and writes (tx_pcap) them.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace metron::test {

inline void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  std::ofstream out(path, std::ios::binary);
  const uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
  out.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t rec[4] = {0, static_cast<uint32_t>(i), static_cast<uint32_t>(frames[i].size()),
                             static_cast<uint32_t>(frames[i].size())};
    out.write(reinterpret_cast<const char*>(rec), sizeof rec);
    out.write(reinterpret_cast<const char*>(frames[i].data()), static_cast<std::streamsize>(frames[i].size()));
  }
}

inline std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::vector<uint8_t>> frames;
  uint32_t hdr[6];
  if (!in.read(reinterpret_cast<char*>(hdr), sizeof hdr)) return frames;
  uint32_t rec[4];
  while (in.read(reinterpret_cast<char*>(rec), sizeof rec)) {
    std::vector<uint8_t> f(rec[2]);
    in.read(reinterpret_cast<char*>(f.data()), rec[2]);
    frames.push_back(f);
  }
  return frames;
}

}  // namespace metron::test
