#include "core/state_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <rte_hash_crc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace metron {

namespace {

constexpr char kMagic[8] = {'M', 'T', 'R', 'N', 'S', 'T', 'A', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = 48;
constexpr const char* kSuffix = ".state";

struct Header {
  uint64_t config_hash = 0;
  uint64_t saved_ms = 0;
  uint64_t payload = 0;
  uint32_t crc = 0;
};

void put(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
uint64_t get(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

uint32_t crc_of(const char* data, size_t n) {
  // rte_hash_crc takes a 32-bit length.
  uint32_t crc = 0xffffffff;
  for (size_t off = 0; off < n;) {
    const uint32_t chunk = static_cast<uint32_t>(std::min<size_t>(n - off, 1u << 30));
    crc = rte_hash_crc(data + off, chunk, crc);
    off += chunk;
  }
  return crc;
}

uint64_t unix_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// File names hold ids verbatim where safe; anything else (':' of chain ids, '/', '.') as %XX, so the '.' between
// pipeline and group is unambiguous and no id can escape the directory.
std::string encode(const std::string& id) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : id) {
    if (std::isalnum(c) || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}
bool decode(const std::string& s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      *out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
      return false;
    *out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return true;
}

std::string errno_text() { return std::strerror(errno); }

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("state directory '" + dir + "': " + errno_text());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("state directory '" + dir + "': fsync: " + errno_text());
}

}  // namespace

StateStore::StateStore(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) throw std::runtime_error("state directory: empty path");
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  for (size_t i = 1; i <= dir_.size(); ++i) {
    if (i < dir_.size() && dir_[i] != '/') continue;
    const std::string part = dir_.substr(0, i);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("state directory '" + dir_ + "': cannot create '" + part + "': " + errno_text());
  }
  struct stat st{};
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("state directory '" + dir_ + "': not a directory");
  if (::access(dir_.c_str(), W_OK) != 0)
    throw std::runtime_error("state directory '" + dir_ + "': not writable: " + errno_text());
}

uint64_t StateStore::config_hash(const std::string& click) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : click) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string StateStore::path_of(const std::string& pipeline, const std::string& group) const {
  return dir_ + "/" + encode(pipeline) + "." + encode(group) + kSuffix;
}

uint64_t StateStore::save(const agent::v1::StateSnapshot& snap, const std::string& click) const {
  const std::string path = path_of(snap.pipeline_id(), snap.group_id());
  std::string out(kHeader, '\0');
  std::memcpy(&out[0], kMagic, sizeof kMagic);
  if (!snap.AppendToString(&out)) throw std::runtime_error(path + ": cannot serialize the snapshot");
  const uint64_t payload = out.size() - kHeader;
  put(out, 8, kVersion, 4);
  put(out, 16, config_hash(click), 8);
  put(out, 24, unix_ms(), 8);
  put(out, 32, payload, 8);
  put(out, 40, crc_of(out.data() + kHeader, payload), 4);

  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(tmp + ": " + errno_text());
  std::string err;
  for (size_t off = 0; off < out.size() && err.empty();) {
    const ssize_t n = ::write(fd, out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = "write: " + errno_text();
    else off += static_cast<size_t>(n);
  }
  if (err.empty() && ::fsync(fd) != 0) err = "fsync: " + errno_text();
  if (::close(fd) != 0 && err.empty()) err = "close: " + errno_text();
  if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) err = "rename to " + path + ": " + errno_text();
  if (!err.empty()) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(tmp + ": " + err);
  }
  fsync_dir(dir_);
  return out.size();
}

std::optional<agent::v1::StateSnapshot> StateStore::load(const std::string& pipeline, const std::string& group,
                                                         const std::string& click, std::string* why) const {
  why->clear();
  const std::string path = path_of(pipeline, group);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) *why = path + ": " + errno_text();
    return std::nullopt;
  }
  std::string in;
  struct stat st{};
  if (::fstat(fd, &st) == 0) in.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < in.size()) {
    const ssize_t n = ::read(fd, &in[got], in.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  in.resize(got);
  auto refuse = [&](const std::string& reason) {
    *why = path + ": " + reason;
    return std::nullopt;
  };
  if (in.size() < kHeader || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    return refuse("not a state file (no header)");
  if (get(in, 8, 4) != kVersion)
    return refuse("format version " + std::to_string(get(in, 8, 4)) + ", this agent reads " + std::to_string(kVersion));
  Header h;
  h.config_hash = get(in, 16, 8);
  h.saved_ms = get(in, 24, 8);
  h.payload = get(in, 32, 8);
  h.crc = static_cast<uint32_t>(get(in, 40, 4));
  if (h.payload != in.size() - kHeader)
    return refuse("truncated: header says " + std::to_string(h.payload) + " payload bytes, file has " +
                  std::to_string(in.size() - kHeader));
  if (crc_of(in.data() + kHeader, h.payload) != h.crc) return refuse("checksum mismatch (corrupt)");
  if (h.config_hash != config_hash(click))
    return refuse("saved for another Click config of the group (config changed while the agent was down)");
  agent::v1::StateSnapshot snap;
  if (!snap.ParseFromArray(in.data() + kHeader, static_cast<int>(h.payload))) return refuse("payload does not parse");
  if (snap.pipeline_id() != pipeline || snap.group_id() != group)
    return refuse("holds pipeline '" + snap.pipeline_id() + "' group '" + snap.group_id() + "'");
  const uint64_t now = unix_ms();
  const uint64_t down = now > h.saved_ms ? now - h.saved_ms : 0;
  for (auto& t : *snap.mutable_tables())
    for (auto& e : *t.mutable_entries()) e.set_idle_ms(e.idle_ms() + down);
  return snap;
}

void StateStore::remove(const std::string& pipeline, const std::string& group) const {
  ::unlink(path_of(pipeline, group).c_str());
}

void StateStore::remove_pipeline(const std::string& pipeline) const {
  for (const auto& [p, g] : list())
    if (p == pipeline) remove(p, g);
}

std::vector<std::pair<std::string, std::string>> StateStore::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return out;
  const size_t suffix = std::strlen(kSuffix);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= suffix || name.compare(name.size() - suffix, suffix, kSuffix) != 0) continue;
    const std::string stem = name.substr(0, name.size() - suffix);
    const size_t dot = stem.find('.');
    std::string p, g;
    if (dot == std::string::npos || !decode(stem.substr(0, dot), &p) || !decode(stem.substr(dot + 1), &g)) continue;
    out.emplace_back(p, g);
  }
  ::closedir(d);
  return out;
}

}  // namespace metron
