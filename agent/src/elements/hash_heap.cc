#include "elements/hash_heap.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace metron {

struct OwnHeap {
  std::string name;
  void* base;
  size_t len;
  size_t bytes;  // rte_hash allocations it holds
  rte_hash* hash = nullptr;
};

namespace {

constexpr size_t kOwnHeapMinBytes = size_t{8} << 20;

// The heaps holding a hash, to find a hash's heap when it is freed, and the lock guarding them (control path and
// grower only). Made on first use and never destroyed: a table owned by a static object (a fuzzer's graph) is
// freed at exit after namespace-scope objects constructed before it are gone (ASan: heap-use-after-free).
struct HashHeaps {
  std::mutex mu;
  std::vector<OwnHeap*> heaps;
};
HashHeaps& hash_heaps() {
  static HashHeaps* const h = new HashHeaps;
  return *h;
}
std::atomic<size_t> g_heaps{0};   // heaps in existence
std::atomic<unsigned> g_seq{0};

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// DPDK zeroes the whole area when it takes it (rte_malloc_heap_memory_add), front to back, which makes every page
// resident; the pages hold zeros only, which is what an untouched anonymous page reads, so they can be given back.
// Giving them back behind the memset, a few MB at a time, keeps the process's peak from growing by the whole
// area (hundreds of MB for the largest tables). Runs until `done`; never touches the first page (DPDK writes its
// element header there once the memset is over). A page given back just before the memset finishes writing it is
// faulted in again as zeros: either way it reads zeros.
class BehindTheMemset {
 public:
  BehindTheMemset(char* base, size_t len) : base_(base), len_(len), thread_([this] { run(); }) {}
  ~BehindTheMemset() {
    done_.store(true);
    thread_.join();
  }

 private:
  void run() {
    const size_t page = page_size(), chunk = size_t{4} << 20;
    std::vector<unsigned char> vec(chunk / page);
    size_t at = page;  // the next chunk not given back yet
    while (!done_.load() && at + chunk <= len_) {
      // The chunk is behind the memset once its last page is resident.
      if (mincore(base_ + at + chunk - page, page, vec.data()) == 0 && (vec[0] & 1)) {
        madvise(base_ + at, chunk, MADV_DONTNEED);
        at += chunk;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    }
  }
  char* base_;
  size_t len_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Undoes make_own_heap, in reverse: the memory leaves the heap (DPDK refuses while anything is allocated in it),
// the heap goes, the pages go back to the OS. If DPDK still holds the memory, the mapping stays (logged).
void release(OwnHeap* h, bool added) {
  if (added && rte_malloc_heap_memory_remove(h->name.c_str(), h->base, h->len) != 0) {
    std::fprintf(stderr, "metron-agent: flow table heap %s: cannot remove its memory (%s); %zu bytes stay mapped\n",
                 h->name.c_str(), rte_strerror(rte_errno), h->len);
    delete h;
    --g_heaps;
    return;
  }
  if (rte_malloc_heap_destroy(h->name.c_str()) != 0)
    std::fprintf(stderr, "metron-agent: flow table heap %s: cannot destroy it (%s)\n", h->name.c_str(),
                 rte_strerror(rte_errno));
  munmap(h->base, h->len);
  delete h;
  --g_heaps;
}

}  // namespace

bool own_heap_pays(size_t bytes) { return bytes >= kOwnHeapMinBytes && !rte_eal_has_hugepages(); }

OwnHeap* make_own_heap(size_t bytes, std::string* why) {
  const size_t page = page_size();
  // rte_hash's allocations each carry a malloc element header and are cache-line aligned; the ring's memzone adds
  // its header. 1/64 and a MiB more cover them; the slack is address space, never touched after the madvise below.
  const size_t len = (bytes + bytes / 64 + (size_t{1} << 20) + page - 1) / page * page;
  void* base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    *why = "mmap of " + std::to_string(len) + " bytes failed";
    return nullptr;
  }
  auto* h = new OwnHeap{"mft" + std::to_string(g_seq++), base, len, bytes};
  ++g_heaps;
  if (rte_malloc_heap_create(h->name.c_str()) != 0) {
    *why = std::string("rte_malloc_heap_create: ") + rte_strerror(rte_errno);  // ENOSPC: RTE_MAX_HEAPS in use
    munmap(base, len);
    delete h;
    --g_heaps;
    return nullptr;
  }
  int added;
  {
    BehindTheMemset chase(static_cast<char*>(base), len);
    added = rte_malloc_heap_memory_add(h->name.c_str(), base, len, nullptr, 0, page);
  }
  if (added != 0) {
    *why = std::string("rte_malloc_heap_memory_add: ") + rte_strerror(rte_errno);  // ENOSPC: no memseg list left
    release(h, false);
    return nullptr;
  }
  // The rest of what DPDK zeroed goes back too, so the hash becomes resident as flows arrive, as in the EAL heap
  // (whose fresh memory is never written). Kept: the first page (DPDK's free-element header) and the last, where a
  // debug build of DPDK would put the element's trailer.
  if (len > 2 * page) madvise(static_cast<char*>(base) + page, len - 2 * page, MADV_DONTNEED);
  return h;
}

void drop_own_heap(OwnHeap* heap) {
  if (heap != nullptr) release(heap, true);
}

rte_hash* create_hash(const rte_hash_parameters& p, size_t bytes, OwnHeapUse use, OwnHeap** standby, HashHome* home) {
  *home = HashHome::kEal;
  if (use == OwnHeapUse::kNo) return rte_hash_create(&p);
  std::string why = "no heap of its own made ahead in time";
  OwnHeap* heap = nullptr;
  if (*standby != nullptr && (*standby)->bytes < bytes) drop_own_heap(*standby), *standby = nullptr;  // outgrown
  std::swap(heap, *standby);
  if (heap == nullptr && use == OwnHeapUse::kYes) heap = make_own_heap(bytes, &why);
  if (heap != nullptr) {
    rte_hash_parameters q = p;
    q.socket_id = rte_malloc_heap_get_socket(heap->name.c_str());
    heap->hash = q.socket_id < 0 ? nullptr : rte_hash_create(&q);
    if (heap->hash != nullptr) {
      HashHeaps& hh = hash_heaps();
      std::lock_guard<std::mutex> lock(hh.mu);
      hh.heaps.push_back(heap);
      *home = HashHome::kOwnHeap;
      return heap->hash;
    }
    why = std::string("rte_hash_create on its heap: ") + rte_strerror(rte_errno);
    release(heap, true);
  }
  std::fprintf(stderr,
               "metron-agent: flow table hash %s (%zu bytes) goes to the EAL heap, whose memory stays resident once "
               "the table grows past it: %s\n",
               p.name, bytes, why.c_str());
  *home = HashHome::kEalFallback;
  return rte_hash_create(&p);
}

void free_hash(rte_hash* h) {
  if (h == nullptr) return;
  OwnHeap* heap = nullptr;
  {
    HashHeaps& hh = hash_heaps();
    std::lock_guard<std::mutex> lock(hh.mu);
    auto it = std::find_if(hh.heaps.begin(), hh.heaps.end(), [h](const OwnHeap* o) { return o->hash == h; });
    if (it != hh.heaps.end()) heap = *it, hh.heaps.erase(it);
  }
  rte_hash_free(h);
  if (heap != nullptr) release(heap, true);
}

size_t own_heaps_in_use() { return g_heaps.load(); }

}  // namespace metron
