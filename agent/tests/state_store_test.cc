// Flow state across agent restarts: the state file itself (round trip, corruption, other config, atomic
// replace), the rewriters' import rules it relies on (timed-out entries stay dead, imported ports stay taken),
// and the whole path through EngineBackend on real ring ethdevs and a real worker: flows mapped by one
// engine keep their translation in a second engine (a restarted agent) deployed with the same pipeline.
#include "core/state_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/engine.h"
#include "core/engine_backend.h"
#include "agent_cli.h"
#include "ring_port.h"
#include "utils/checksum.h"

namespace metron {
namespace {

namespace pb = ::metron::agent::v1;
using test::Flow;
using test::GroupUnderTest;
using test::RingPort;

constexpr unsigned kWorker = 1;  // test EAL runs lcores 0-1

// Every test's files live under one directory of this process, removed when the tests end.
const std::string& test_root() {
  static const std::string root = "/tmp/metron-state-test-" + std::to_string(getpid());
  return root;
}
class RemoveTestRoot : public ::testing::Environment {
 public:
  void TearDown() override { std::system(("rm -rf '" + test_root() + "'").c_str()); }
};
const auto* const kRemoveTestRoot = ::testing::AddGlobalTestEnvironment(new RemoveTestRoot);

std::string fresh_dir(const std::string& name) {
  const std::string dir = test_root() + "/" + name;
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + test_root() + "'").c_str());
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void spill(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}
bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

pb::StateSnapshot sample_snapshot(const std::string& pipeline, const std::string& group, int entries) {
  pb::StateSnapshot s;
  s.set_pipeline_id(pipeline);
  s.set_group_id(group);
  pb::StateTable* t = s.add_tables();
  t->set_element("rw");
  t->set_kind("SynthRewriter");
  t->set_allocator_state(std::string("\x00\x07\x00\x00\x00\x01", 6));
  for (int i = 0; i < entries; ++i) {
    pb::FlowEntry* e = t->add_entries();
    e->mutable_key()->set_src_ip(std::string("\x0a\x00\x00\x01", 4));
    e->mutable_key()->set_dst_ip(std::string("\xc0\xa8\x01\x01", 4));
    e->mutable_key()->set_src_port(3000 + i);
    e->mutable_key()->set_dst_port(80);
    e->mutable_key()->set_proto(17);
    *e->mutable_mapped() = e->key();
    e->mutable_mapped()->set_src_ip(std::string("\x05\x05\x05\x05", 4));
    e->mutable_mapped()->set_src_port(1025 + i);
    e->set_idle_ms(100);
  }
  return s;
}

const std::string kClick = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -)"
                           " -> Unstrip(14) -> [0]output;";

// ---- the file ----------------------------------------------------------------------------------------------

TEST(StateStore, RoundTripKeepsEveryEntryAndAgesThemByTheDowntime) {
  StateStore store(fresh_dir("roundtrip") + "/nested/dir");  // parents are created
  const pb::StateSnapshot snap = sample_snapshot("sc:chain:napt:0", "g/1.a", 500);
  EXPECT_GT(store.save(snap, kClick), 500u * 20);
  // Ids with ':', '/' and '.' stay inside the directory and come back from the file name.
  const std::string path = store.path_of("sc:chain:napt:0", "g/1.a");
  EXPECT_EQ(path.rfind(store.dir() + "/", 0), 0u);
  EXPECT_EQ(path.find('/', store.dir().size() + 1), std::string::npos) << path;
  ASSERT_TRUE(exists(path));
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.list()[0], std::make_pair(std::string("sc:chain:napt:0"), std::string("g/1.a")));
  EXPECT_FALSE(exists(path + ".tmp"));

  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  std::string why;
  auto back = store.load("sc:chain:napt:0", "g/1.a", kClick, &why);
  ASSERT_TRUE(back.has_value()) << why;
  EXPECT_TRUE(why.empty());
  ASSERT_EQ(back->tables_size(), 1);
  ASSERT_EQ(back->tables(0).entries_size(), 500);
  EXPECT_EQ(back->tables(0).allocator_state(), snap.tables(0).allocator_state());
  for (int i = 0; i < 500; ++i) {
    const pb::FlowEntry& e = back->tables(0).entries(i);
    EXPECT_EQ(e.key().SerializeAsString(), snap.tables(0).entries(i).key().SerializeAsString());
    EXPECT_EQ(e.mapped().src_port(), 1025u + i);
    EXPECT_GE(e.idle_ms(), 100u + 60u) << "idle time grows by the time the file sat on disk";
    EXPECT_LT(e.idle_ms(), 100u + 60000u);
  }
  // Saving again replaces the file atomically; a group with no file simply has nothing.
  store.save(sample_snapshot("sc:chain:napt:0", "g/1.a", 3), kClick);
  back = store.load("sc:chain:napt:0", "g/1.a", kClick, &why);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->tables(0).entries_size(), 3);
  EXPECT_FALSE(store.load("sc:chain:napt:0", "other", kClick, &why).has_value());
  EXPECT_TRUE(why.empty()) << "no file is not an error";
}

TEST(StateStore, CorruptTruncatedOrForeignFilesAreRefusedWithTheirReason) {
  StateStore store(fresh_dir("corrupt"));
  store.save(sample_snapshot("p", "g", 50), kClick);
  const std::string path = store.path_of("p", "g");
  const std::string good = slurp(path);
  std::string why;
  auto expect_refused = [&](const std::string& bytes, const std::string& reason) {
    spill(path, bytes);
    EXPECT_FALSE(store.load("p", "g", kClick, &why).has_value()) << reason;
    EXPECT_NE(why.find(reason), std::string::npos) << why;
    EXPECT_NE(why.find(path), std::string::npos) << "names the file: " << why;
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  expect_refused(flipped, "checksum mismatch");
  expect_refused(good.substr(0, good.size() - 7), "truncated");
  expect_refused(good.substr(0, 20), "not a state file");
  expect_refused("hello, world: not a state file at all, but long enough for a header", "not a state file");
  std::string version = good;
  version[8] = 9;
  expect_refused(version, "format version 9");
  // The same bytes under another group's name: the header checks pass, the ids inside do not match.
  spill(path, good);
  spill(store.path_of("p", "h"), good);
  EXPECT_FALSE(store.load("p", "h", kClick, &why).has_value());
  EXPECT_NE(why.find("holds pipeline 'p' group 'g'"), std::string::npos) << why;
  // The intact file still loads.
  EXPECT_TRUE(store.load("p", "g", kClick, &why).has_value()) << why;
}

TEST(StateStore, AFileSavedForAnotherClickConfigIsNotUsed) {
  StateStore store(fresh_dir("config"));
  store.save(sample_snapshot("p", "g", 5), kClick);
  std::string why;
  EXPECT_FALSE(store.load("p", "g", kClick + " ", &why).has_value());
  EXPECT_NE(why.find("another Click config"), std::string::npos) << why;
  EXPECT_TRUE(store.load("p", "g", kClick, &why).has_value());
}

TEST(StateStore, RemoveTakesOneGroupOrAWholePipeline) {
  StateStore store(fresh_dir("remove"));
  for (const char* g : {"a", "b"}) store.save(sample_snapshot("p1", g, 1), kClick);
  store.save(sample_snapshot("p10", "a", 1), kClick);
  store.remove("p1", "a");
  EXPECT_EQ(store.list().size(), 2u);
  store.remove_pipeline("p1");
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.list()[0].first, "p10");
}

TEST(StateStore, AnUnusableDirectoryIsAnErrorNamingIt) {
  const std::string file = fresh_dir("notadir");
  spill(file, "x");
  try {
    StateStore s(file);
    FAIL() << "a regular file accepted as state directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
  std::remove(file.c_str());
}

// ---- what the rewriters do with restored tables -------------------------------------------------------------

TEST(StateRestore, EntriesPastTheirTimeoutAreNotImported) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, "
                   "UDP_TIMEOUT 2, TCP_TIMEOUT 60, TCP_NODATA_TIMEOUT 60) -> Unstrip(14) -> [0]output;");
  pb::StateSnapshot s = sample_snapshot("p", "g", 4);
  pb::StateTable t = s.tables(0);
  t.mutable_entries(0)->set_idle_ms(1999);   // UDP, still alive
  t.mutable_entries(1)->set_idle_ms(2500);   // UDP, timed out
  t.mutable_entries(2)->set_idle_ms(30000);  // TCP, alive
  t.mutable_entries(3)->set_idle_ms(61000);  // TCP, timed out
  for (int i : {2, 3}) {
    t.mutable_entries(i)->mutable_key()->set_proto(6);
    t.mutable_entries(i)->mutable_mapped()->set_proto(6);
  }
  EXPECT_EQ(g.graph->find("rw")->import_state(t, false), 2u);
  pb::StateTable back;
  g.graph->find("rw")->export_state(&back);
  std::set<uint32_t> ports;
  for (const auto& e : back.entries()) ports.insert(e.key().src_port());
  EXPECT_EQ(ports, (std::set<uint32_t>{3000, 3002}));
  // A packet of a timed-out flow is a new flow: it gets a new port, not the old mapping back.
  Flow f;
  f.sport = 3001;
  g.push(test::frame(f));
  ASSERT_EQ(g.sink.out[0].size(), 1u);
  EXPECT_NE(load16(g.sink.out[0][0].data() + 14 + 20), 1026);
}

TEST(StateRestore, ImportedMappingsKeepTheirPortsFromNewFlows) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -) "
                   "-> Unstrip(14) -> [0]output;");
  pb::StateTable t = sample_snapshot("p", "g", 40).tables(0);  // ports 1025..1064 to 192.168.1.1:80
  t.clear_allocator_state();  // the allocator starts where a fresh one does: right on the imported ports
  ASSERT_EQ(g.graph->find("rw")->import_state(t, false), 40u);
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 40; ++i) {
    Flow f;
    f.src = "10.0.0.2";  // other clients, same server
    f.sport = static_cast<uint16_t>(5000 + i);
    frames.push_back(test::frame(f));
  }
  g.push(frames);
  ASSERT_EQ(g.sink.out[0].size(), 40u);
  for (const auto& out : g.sink.out[0]) {
    const uint16_t port = load16(out.data() + 14 + 20);
    EXPECT_TRUE(port < 1025 || port > 1064) << "new flow got imported port " << port;
  }
}

// ---- through the backend: a restarted agent ------------------------------------------------------------------

// One agent process: an engine with an ingress and an egress ring port, a worker, its backend over `dir`.
class Agent {
 public:
  explicit Agent(const std::string& dir) : store_(dir) {
    static int n = 0;
    ++n;
    in_ = std::make_unique<RingPort>("sin" + std::to_string(n));
    out_ = std::make_unique<RingPort>("sout" + std::to_string(n));
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kWorker}, test::pool());
    in_port_ = engine_->add_port(std::move(in_->port));
    out_port_ = engine_->add_port(std::move(out_->port));
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    backend_->set_state_store(&store_);
    engine_->start();
  }
  // What main.cc does on SIGTERM: stop the workers, then save.
  size_t shut_down() {
    engine_->stop();
    return backend_->persist_state();
  }
  ~Agent() {
    if (engine_->running()) engine_->stop();
    backend_.reset();
    engine_.reset();
  }
  pb::DeployPipelineRequest pipeline(const std::string& click) const {
    pb::DeployPipelineRequest r;
    r.set_pipeline_id("sc:napt");
    r.set_ingress_nic(in_port_->name());
    r.add_egress()->set_nic(out_port_->name());
    pb::GroupSpec* g = r.add_groups();
    g->set_group_id("g7");
    g->set_click_config(click);
    g->mutable_tag()->set_type(pb::TAG_MAC);
    g->mutable_tag()->set_value(7);
    g->set_core(kWorker);
    return r;
  }
  grpc::Status deploy(const std::string& click) {
    pb::PipelineStatus st;
    return backend_->DeployPipeline(pipeline(click), &st);
  }
  // Entries of the group's tables right now.
  int flows() {
    pb::ExportStateRequest req;
    req.set_pipeline_id("sc:napt");
    req.set_group_id("g7");
    pb::StateSnapshot snap;
    EXPECT_TRUE(backend_->ExportState(req, &snap).ok());
    int n = 0;
    for (const auto& t : snap.tables()) n += t.entries_size();
    return n;
  }
  // Sends one frame per client port, in this order and one at a time (the order of first packets decides the
  // ports a fresh allocator hands out); answers client port -> NAPT port of the frame that left.
  std::map<uint16_t, uint16_t> send(const std::vector<uint16_t>& sports) {
    std::map<uint16_t, uint16_t> out;
    for (uint16_t sp : sports) {
      Flow f;
      f.dst_mac = "02:4d:00:07:00:01";
      f.sport = sp;
      in_->inject(test::frame(f));
      std::vector<std::vector<uint8_t>> frames;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (frames.empty() && std::chrono::steady_clock::now() < deadline) {
        frames = out_->drain();
        if (frames.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      EXPECT_EQ(frames.size(), 1u) << "client port " << sp;
      if (frames.size() != 1) continue;
      EXPECT_EQ(frames[0][14 + 12], 5) << "source translated to 5.5.5.5";
      out[sp] = load16(frames[0].data() + 14 + 20);
    }
    return out;
  }
  EngineBackend& backend() { return *backend_; }
  StateStore& store() { return store_; }

 private:
  StateStore store_;
  std::unique_ptr<RingPort> in_, out_;
  Port* in_port_ = nullptr;
  Port* out_port_ = nullptr;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
};

std::vector<uint16_t> ports(uint16_t from, uint16_t n) {
  std::vector<uint16_t> v;
  for (uint16_t i = 0; i < n; ++i) v.push_back(static_cast<uint16_t>(from + i));
  return v;
}

TEST(StateAcrossRestart, FlowsKeepTheirTranslationAfterAGracefulRestart) {
  const std::string dir = fresh_dir("graceful");
  std::map<uint16_t, uint16_t> before;
  {
    Agent a(dir);
    ASSERT_TRUE(a.deploy(kClick).ok());
    before = a.send(ports(3000, 20));
    ASSERT_EQ(before.size(), 20u);
    EXPECT_EQ(a.shut_down(), 1u);
  }
  Agent b(dir);
  const std::string file = b.store().path_of("sc:napt", "g7");
  ASSERT_TRUE(exists(file));
  EXPECT_EQ(b.backend().persist_state(), 0u);
  EXPECT_TRUE(exists(file)) << "a checkpoint before the redeploy must not drop the state waiting for it";
  ASSERT_TRUE(b.deploy(kClick).ok());
  EXPECT_EQ(b.flows(), 20) << "imported before the group runs";
  EXPECT_FALSE(exists(file)) << "consumed by the deployment";
  // New flows first, then the old ones in reverse order: a fresh table would give the old flows other ports.
  const auto fresh = b.send(ports(4000, 10));
  auto old = ports(3000, 20);
  std::reverse(old.begin(), old.end());
  EXPECT_EQ(b.send(old), before);
  std::set<uint16_t> taken;
  for (const auto& [client, napt] : before) taken.insert(napt);
  for (const auto& [client, napt] : fresh) EXPECT_FALSE(taken.count(napt)) << "new flow " << client << " got " << napt;
}

TEST(StateAcrossRestart, ACheckpointSurvivesACrash) {
  const std::string dir = fresh_dir("crash");
  std::map<uint16_t, uint16_t> before;
  {
    Agent a(dir);
    ASSERT_TRUE(a.deploy(kClick).ok());
    before = a.send(ports(3000, 20));
    EXPECT_EQ(a.backend().persist_state(), 1u);  // the periodic checkpoint, taken while the worker runs
    a.send(ports(3100, 5));                       // after the checkpoint: lost with the crash
  }                                               // no shutdown save: a crash
  Agent b(dir);
  ASSERT_TRUE(b.deploy(kClick).ok());
  EXPECT_EQ(b.flows(), 20);
  b.send(ports(4000, 10));
  EXPECT_EQ(b.send(ports(3000, 20)), before);
}

TEST(StateAcrossRestart, FlowsThatTimedOutWhileTheAgentWasDownStayGone) {
  const std::string dir = fresh_dir("expired");
  const std::string click = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -,"
                            " UDP_TIMEOUT 0.8) -> Unstrip(14) -> [0]output;";
  {
    Agent a(dir);
    ASSERT_TRUE(a.deploy(click).ok());
    a.send(ports(3000, 5));
    EXPECT_EQ(a.shut_down(), 1u);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  Agent b(dir);
  ASSERT_TRUE(b.deploy(click).ok());
  EXPECT_EQ(b.flows(), 0);
}

TEST(StateAcrossRestart, AFileForAnotherConfigOrCorruptIsIgnoredAndConsumed) {
  for (const bool corrupt : {false, true}) {
    const std::string dir = fresh_dir(corrupt ? "bad-corrupt" : "bad-config");
    {
      Agent a(dir);
      ASSERT_TRUE(a.deploy(kClick).ok());
      a.send(ports(3000, 5));
      EXPECT_EQ(a.shut_down(), 1u);
    }
    Agent b(dir);
    const std::string file = b.store().path_of("sc:napt", "g7");
    std::string click = kClick;
    if (corrupt) {
      std::string bytes = slurp(file);
      bytes[bytes.size() - 3] ^= 1;
      spill(file, bytes);
    } else {
      click = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.6 1024-65535 - -)"
              " -> Unstrip(14) -> [0]output;";
    }
    ASSERT_TRUE(b.deploy(click).ok());
    EXPECT_EQ(b.flows(), 0);
    EXPECT_FALSE(exists(file));
  }
}

TEST(StateAcrossRestart, ATableThatDoesNotImportLeavesTheWholeGroupEmpty) {
  const std::string dir = fresh_dir("half");
  const std::string click = "input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -)"
                            " -> rw2 :: SynthRewriter(PATTERN - - 6.6.6.6 -) -> Unstrip(14) -> [0]output;";
  {
    StateStore store(dir);
    pb::StateSnapshot snap = sample_snapshot("sc:napt", "g7", 10);
    pb::StateTable* second = snap.add_tables();
    *second = snap.tables(0);
    second->set_element("rw2");
    second->mutable_entries(9)->set_backend(4);  // rw2 has one pattern
    store.save(snap, click);
  }
  Agent b(dir);
  ASSERT_TRUE(b.deploy(click).ok());
  EXPECT_EQ(b.flows(), 0) << "rw imported, rw2 refused: rw must not keep its half";
}

TEST(StateAcrossRestart, ARemovedPipelineLeavesNoStateBehind) {
  Agent a(fresh_dir("removed"));
  ASSERT_TRUE(a.deploy(kClick).ok());
  a.send(ports(3000, 3));
  EXPECT_EQ(a.backend().persist_state(), 1u);
  ASSERT_EQ(a.store().list().size(), 1u);
  pb::RemovePipelineRequest rm;
  rm.set_pipeline_id("sc:napt");
  pb::RemovePipelineReply reply;
  ASSERT_TRUE(a.backend().RemovePipeline(rm, &reply).ok());
  EXPECT_TRUE(a.store().list().empty());
  EXPECT_EQ(a.shut_down(), 0u);
  EXPECT_TRUE(a.store().list().empty());
}

TEST(StateAcrossRestart, AGroupRetiredByAnUpdateLosesItsFileAndItsSuccessorGetsOne) {
  const std::string dir = fresh_dir("retired");
  std::map<uint16_t, uint16_t> before;
  {
    Agent a(dir);
    ASSERT_TRUE(a.deploy(kClick).ok());
    before = a.send(ports(3000, 8));
    EXPECT_EQ(a.backend().persist_state(), 1u);
    // A split's kept half under a new id: g8 takes over g7's tag with its state.
    pb::UpdatePipelineRequest up;
    up.set_pipeline_id("sc:napt");
    *up.add_groups() = a.pipeline(kClick).groups(0);
    up.mutable_groups(0)->set_group_id("g8");
    up.mutable_groups(0)->add_state_from("g7");
    pb::PipelineStatus st;
    ASSERT_TRUE(a.backend().UpdatePipeline(up, &st).ok());
    EXPECT_EQ(a.backend().persist_state(), 1u);
    const auto files = a.store().list();
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].second, "g8") << "g7's file goes with g7";
    a.shut_down();
  }
  Agent b(dir);
  pb::DeployPipelineRequest again = b.pipeline(kClick);
  again.mutable_groups(0)->set_group_id("g8");
  pb::PipelineStatus st;
  ASSERT_TRUE(b.backend().DeployPipeline(again, &st).ok());
  b.send(ports(4000, 4));
  EXPECT_EQ(b.send(ports(3000, 8)), before);
}

TEST(StateOptions, AreCheckedAtStart) {
  std::string out;
  EXPECT_EQ(test::RunAgent("--state-checkpoint-ms 100 --dpdk --no-huge --", &out), 2);
  EXPECT_NE(out.find("--state-checkpoint-ms needs --state-dir"), std::string::npos) << out;
  out.clear();
  const std::string file = fresh_dir("cli-file");
  spill(file, "x");
  EXPECT_EQ(test::RunAgent("--state-dir " + file + " --listen 127.0.0.1:0 --dpdk -l 0 --no-huge -m 256 --no-pci "
                           "--log-level lib.eal:error --file-prefix st" + std::to_string(getpid()) + " --",
                           &out),
            2);
  EXPECT_NE(out.find("--state-dir: state directory '" + file + "'"), std::string::npos) << out;
  std::remove(file.c_str());
}

}  // namespace
}  // namespace metron
