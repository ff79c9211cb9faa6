// Where a growing flow table puts each generation's rte_hash, so that retiring a generation gives its memory back.
//
// With --no-huge (this machine, agent/README.md) the EAL heap is one anonymous mapping made at start: rte_free
// zeroes a freed block (so every page of it becomes resident, touched or not) and never returns it to the OS. A
// growing table frees its previous hash at each doubling, so 1M flows grown from empty kept ~126 MB of dead hashes
// resident (BENCHMARKS.md, issue 13). Here a large hash gets a DPDK external heap of its own, over memory mapped
// here for it: rte_hash places all its allocations (buckets, key store, the free-slot ring's memzone) on the heap's
// socket id, and retiring it removes that memory from the heap, destroys the heap and unmaps the memory.
//
// DPDK zeroes an external heap's memory when it takes it, every page; the pages are given back behind its memset (they
// read zeros either way), so a hash still becomes resident only as flows arrive, but making a heap costs page faults
// over all of it (~1 ms per MB here): the grower makes the next one ahead of the growth (FlowTable).
// External heaps are few (RTE_MAX_HEAPS, 32 with the NUMA nodes' own; one memseg list each of RTE_MAX_MEMSEG_LISTS):
// a hash that cannot get one goes to the EAL heap as before, and the caller counts it (shared_heap_hashes).
// Creating and destroying heaps takes DPDK's memory-hotplug lock and page faults: control path or the grower thread,
// never a core.
#pragma once

#include <cstddef>
#include <string>

struct rte_hash;
struct rte_hash_parameters;

namespace metron {

// Whether a hash of `bytes` should get a heap of its own: the EAL heap keeps freed memory (no hugepages; with
// hugepages DPDK unmaps freed pages itself), and the hash is large enough to matter (below 8 MiB the hashes a
// doubling table frees add up to less than 8 MiB, not worth one of the few heaps).
bool own_heap_pays(size_t bytes);

// A heap of its own for one hash, made ahead of it: making one is the slow part (DPDK zeroes all of its memory when
// it takes it, ~1 ms per MB here), so the grower makes the next one while the table still has room.
struct OwnHeap;
// nullptr, `why` set, if DPDK or the OS refuse (no heap or memseg list left, no memory).
OwnHeap* make_own_heap(size_t bytes, std::string* why);
// An own heap no hash went into (nullptr: nothing).
void drop_own_heap(OwnHeap* heap);

enum class HashHome { kEal, kOwnHeap, kEalFallback };
// Whether create_hash puts the hash in a heap of its own: never; only in a standby one that is ready (a growth on the
// grower, which must not make the core wait for a heap to be zeroed); in one made now if none is ready.
enum class OwnHeapUse { kNo, kIfReady, kYes };

// Creates the hash `p` describes, in a heap of its own as `use` says, sized for `bytes` of rte_hash allocations
// (p.socket_id is then the heap's): *standby if it is big enough (taken: *standby becomes nullptr; one too small is
// dropped); if none can be had, or use is kNo, on p.socket_id's EAL heap. *home says which (kEalFallback: a heap of
// its own was wanted and could not be had; logged). nullptr (rte_errno set) if the memory cannot be had.
rte_hash* create_hash(const rte_hash_parameters& p, size_t bytes, OwnHeapUse use, OwnHeap** standby, HashHome* home);
// Frees a hash create_hash made (nullptr: nothing); a hash in a heap of its own returns the heap's memory to the OS.
void free_hash(rte_hash* h);
// Own heaps in existence now, process-wide, standby ones included (tests).
size_t own_heaps_in_use();

}  // namespace metron
