// FlowTable's per-packet lookups of IPv4 keys with their signatures, through the home slots and the index of
// declared tables (flow_table.h), and the placement of a flow whose home is taken.
#include "elements/flow_table.h"

#include <rte_hash.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace metron {

void FlowTable::lookup4(const Key4* const* keys, unsigned n, int32_t* out) const {
  uint32_t sigs[RTE_HASH_LOOKUP_BULK_MAX];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    for (unsigned i = 0; i < chunk; ++i) sigs[i] = sig4(*keys[done + i]), prefetch_sig(sigs[i]);
    lookup4(keys + done, sigs, chunk, out + done);
    done += chunk;
  }
}

namespace {
// Whether two keys are the same 16 bytes: two 8-byte compares, no call, no copy through the stack.
bool same_key(const void* a, const void* b) {
  uint64_t x[2], y[2];
  std::memcpy(x, a, sizeof x);
  std::memcpy(y, b, sizeof y);
  return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}
}  // namespace

inline bool FlowTable::holds(uint32_t idx, unsigned dir, const Key4& key) const {
  if (idx >= fresh_ || !meta(idx).live) return false;
  if (dir == 0) return same_key(&orig4(idx), &key);
  const Key4 k = reversed(mapped4(idx));
  return same_key(&k, &key);
}

inline int32_t FlowTable::index_probe(uint32_t sig) const {
  const IndexBucket* b = bucket_of(sig);
#if defined(__SSE2__)
  const __m128i s = _mm_set1_epi32(static_cast<int>(sig)), zero = _mm_setzero_si128();
  const auto* v = reinterpret_cast<const __m128i*>(b);
  const auto bits = [](__m128i eq) { return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(eq))); };
  const unsigned same = bits(_mm_cmpeq_epi32(_mm_load_si128(v), s)) | bits(_mm_cmpeq_epi32(_mm_load_si128(v + 1), s)) << 4;
  const unsigned unset =
      bits(_mm_cmpeq_epi32(_mm_load_si128(v + 2), zero)) | bits(_mm_cmpeq_epi32(_mm_load_si128(v + 3), zero)) << 4;
  const unsigned hit = same & ~unset;
  return hit != 0 ? static_cast<int32_t>(b->ref[__builtin_ctz(hit)] - 1) : -1;
#else
  for (unsigned w = 0; w < kIndexWays; ++w)
    if (b->sig[w] == sig && b->ref[w] != 0) return static_cast<int32_t>(b->ref[w] - 1);
  return -1;
#endif
}

void FlowTable::index_put(uint32_t sig, uint32_t ref) const {
  IndexBucket* b = bucket_of(sig);
  unsigned to = kIndexWays;
  for (unsigned w = 0; w < kIndexWays; ++w) {
    if (b->ref[w] == ref) {
      to = w;
      break;
    }
    if (b->ref[w] == 0 && to == kIndexWays) to = w;
  }
  if (to == kIndexWays) to = sig >> 29;  // full: the bits above those that chose the bucket choose the way
  b->sig[to] = sig;
  b->ref[to] = ref;
}

void FlowTable::index_drop(uint32_t sig, uint32_t ref) const {
  IndexBucket* b = bucket_of(sig);
  for (unsigned w = 0; w < kIndexWays; ++w)
    if (b->ref[w] == ref) b->ref[w] = 0;
}

void FlowTable::lookup4(const Key4* const* keys, const uint32_t* sigs, unsigned n, int32_t* out) const {
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    if (index_ != nullptr) {
      lookup_indexed(keys + done, sigs + done, chunk, out + done);
      done += chunk;
      continue;
    }
    const void* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
    uint32_t s[RTE_HASH_LOOKUP_BULK_MAX];
    std::memcpy(ptrs, keys + done, chunk * sizeof *ptrs);
    std::memcpy(s, sigs + done, chunk * sizeof *s);
    lookup_hashed(ptrs, s, chunk, out + done);
    for (unsigned i = 0; i < chunk; ++i)
      if (out[done + i] >= 0) prefetch(static_cast<uint32_t>(out[done + i]) >> 1);
    done += chunk;
  }
}

void FlowTable::lookup_indexed(const Key4* const* keys, const uint32_t* sigs, unsigned n, int32_t* out) const {
  // Stage 0: each key against its home record (its line asked for where the key was read, prefetch_sig()); the
  // keys it does not answer have their index line asked for, all at once.
  unsigned pend[RTE_HASH_LOOKUP_BULK_MAX], np = 0;
  for (unsigned i = 0; i < n; ++i) {
    const uint32_t h = home_of(sigs[i]), b = buddy(h);
    const uint8_t* r = chunks_[0] + size_t{h} * stride_;
    if (reinterpret_cast<const FlowMeta*>(r)->live && same_key(r + sizeof(FlowMeta), keys[i])) {
      out[i] = static_cast<int32_t>(h << 1 | r[kHomeDirAt]);
      continue;
    }
    r = chunks_[0] + size_t{b} * stride_;
    if (reinterpret_cast<const FlowMeta*>(r)->live && same_key(r + sizeof(FlowMeta), keys[i])) {
      out[i] = static_cast<int32_t>(b << 1 | r[kHomeDirAt]);
      continue;
    }
    __builtin_prefetch(bucket_of(sigs[i]));
    pend[np++] = i;
  }
  if (np < n) home_hits_.add(n - np);
  // Stage 1: the record each key's bucket names, asked for at once.
  for (unsigned k = 0; k < np; ++k) {
    const unsigned i = pend[k];
    const int32_t ref = index_probe(sigs[i]);
    out[i] = ref;
    if (ref >= 0 && static_cast<uint32_t>(ref >> 1) < fresh_) prefetch(static_cast<uint32_t>(ref) >> 1);
  }
  // Stage 2: each key compared with its record's; the rest go to the rte_hash with their signatures, in bulk.
  const void* miss[RTE_HASH_LOOKUP_BULK_MAX];
  uint32_t miss_sig[RTE_HASH_LOOKUP_BULK_MAX];
  unsigned nm = 0, hits = 0;
  for (unsigned k = 0; k < np; ++k) {
    const unsigned i = pend[k];
    if (out[i] >= 0 && holds(static_cast<uint32_t>(out[i]) >> 1, out[i] & 1, *keys[i])) {
      ++hits;
      continue;
    }
    out[i] = -1;
    miss[nm] = keys[i], miss_sig[nm] = sigs[i], pend[nm++] = i;  // pend[] from here on: the misses' positions
  }
  if (hits) index_hits_.add(hits);
  if (nm == 0) return;
  int32_t found[RTE_HASH_LOOKUP_BULK_MAX];
  lookup_hashed(miss, miss_sig, nm, found);
  for (unsigned k = 0; k < nm; ++k) {
    if (found[k] < 0) continue;
    out[pend[k]] = found[k];
    prefetch(static_cast<uint32_t>(found[k]) >> 1);
    index_put(miss_sig[k], static_cast<uint32_t>(found[k]) + 1);  // put back: the next packet finds it
  }
  index_fallbacks_.add(nm);
}

uint32_t FlowTable::free_slot() {
  // From where the last search stopped, a word of 64 slots at a time, wrapping at the end.
  const uint32_t words = (slots_ + 63) / 64;
  for (uint32_t w = free_at_ / 64, tried = 0; tried <= words; ++tried, w = w + 1 < words ? w + 1 : 0) {
    uint64_t free = ~used_[w];
    if (w == words - 1 && slots_ % 64 != 0) free &= (uint64_t{1} << (slots_ % 64)) - 1;
    if (free == 0) continue;
    const uint32_t idx = w * 64 + static_cast<uint32_t>(__builtin_ctzll(free));
    free_at_ = idx + 1 < slots_ ? idx + 1 : 0;
    return idx;
  }
  return kNoRecord;  // not reached: insert() checks that fewer flows than slots are held
}

}  // namespace metron
