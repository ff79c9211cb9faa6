// StateStore: the flow state (NAPT/LB tables) of each group on disk, so that an agent restart does not give
// established flows new translations. The controller redeploys the same pipeline after a restart
// (ServerRecovery); a group whose file matches is filled from it before it sees a packet.
//
// One file per group, `<pipeline>.<group>.state` in the state directory (ids percent-encoded), holding the
// group's pb::StateSnapshot - the message ExportState/ImportState and split/merge already use, so there is one
// format for flow state - behind a fixed header:
//   "MTRNSTAT" | u32 version | u32 0 | u64 FNV-1a of the group's Click config | u64 unix ms when saved
//   | u64 payload bytes | u32 CRC32-C of the payload | u32 0 | payload (the serialized StateSnapshot)
// (little endian). Writes are atomic: a temporary file in the same directory, fsync, rename, fsync of the
// directory; a crash leaves the old file or the new one, never a torn one.
//
// A file that is corrupt, truncated, of another format version, for another pipeline/group or for another Click
// config is not used: load() says why and the caller logs it. Entries come back older by the time the file sat
// on disk (idle_ms + downtime), so a flow whose timeout passed while the agent was down is not revived (the
// rewriters drop entries past their timeout on import).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

class StateStore {
 public:
  // Creates `dir` (and its parents) if missing; throws std::runtime_error naming it when that fails.
  explicit StateStore(std::string dir);

  const std::string& dir() const { return dir_; }
  std::string path_of(const std::string& pipeline, const std::string& group) const;

  // Writes snap (keyed by its pipeline_id/group_id) for a group running `click`. Returns the file's size.
  // Throws std::runtime_error naming the file on an I/O error (the previous file, if any, is left as it was).
  uint64_t save(const agent::v1::StateSnapshot& snap, const std::string& click) const;

  // The saved state of (pipeline, group) if its file exists, is intact and was saved for `click`, with every
  // entry's idle_ms advanced by the time since the save. Otherwise nullopt and *why says what was wrong (empty
  // when there is simply no file).
  std::optional<agent::v1::StateSnapshot> load(const std::string& pipeline, const std::string& group,
                                               const std::string& click, std::string* why) const;

  // Removes the file of one group / of every group of a pipeline (no error when absent).
  void remove(const std::string& pipeline, const std::string& group) const;
  void remove_pipeline(const std::string& pipeline) const;
  // (pipeline, group) of every state file in the directory.
  std::vector<std::pair<std::string, std::string>> list() const;

  static uint64_t config_hash(const std::string& click);

 private:
  std::string dir_;
};

}  // namespace metron
