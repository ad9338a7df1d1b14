// Race mode's -fsanitize=thread entry points (the subset GCC and clang emit for the kernels),
// which the instrumented kernel translation units call. Outside a race-mode launch the access
// hooks return at once; the atomics always do the operation (sequentially consistent: stronger
// than any order asked for). This file itself must not be instrumented (cuda/CMakeLists.txt).
#include <cstdint>

#include "cuda/race_access.h"

using Kind = gscheck::cuda::AccessKind;
using gscheck::cuda::t_state;

namespace {

inline void hook(const volatile void* p, uint64_t n, Kind k) {
  if (t_state) [[unlikely]]
    gscheck::cuda::race_access(t_state, reinterpret_cast<uintptr_t>(p), n, k);
}

}  // namespace

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define GSCHECK_TSAN_RW(n)                                                  \
  void __tsan_read##n(void* p) { hook(p, n, Kind::kRead); }                 \
  void __tsan_write##n(void* p) { hook(p, n, Kind::kWrite); }               \
  void __tsan_unaligned_read##n(const void* p) { hook(p, n, Kind::kRead); } \
  void __tsan_unaligned_write##n(void* p) { hook(p, n, Kind::kWrite); }     \
  void __tsan_volatile_read##n(void* p) { hook(p, n, Kind::kRead); }        \
  void __tsan_volatile_write##n(void* p) { hook(p, n, Kind::kWrite); }      \
  void __tsan_read##n##_pc(void* p, void*) { hook(p, n, Kind::kRead); }     \
  void __tsan_write##n##_pc(void* p, void*) { hook(p, n, Kind::kWrite); }
GSCHECK_TSAN_RW(1)
GSCHECK_TSAN_RW(2)
GSCHECK_TSAN_RW(4)
GSCHECK_TSAN_RW(8)
GSCHECK_TSAN_RW(16)
#undef GSCHECK_TSAN_RW

void __tsan_read_range(void* p, unsigned long n) { hook(p, n, Kind::kRead); }
void __tsan_write_range(void* p, unsigned long n) { hook(p, n, Kind::kWrite); }

#define GSCHECK_TSAN_ATOMIC(bits, T)                                                        \
  T __tsan_atomic##bits##_load(const volatile T* a, int) {                                  \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                            \
  }                                                                                         \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                               \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                               \
  }                                                                                         \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                               \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                     \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                              \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                              \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                              \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                               \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                       \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                              \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                             \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                     \
  }                                                                                         \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {   \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
  }                                                                                         \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {     \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
  }                                                                                         \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {         \
    hook(a, sizeof(T), Kind::kAtomic);                                                      \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
    return c;                                                                               \
  }
GSCHECK_TSAN_ATOMIC(8, uint8_t)
GSCHECK_TSAN_ATOMIC(16, uint16_t)
GSCHECK_TSAN_ATOMIC(32, uint32_t)
GSCHECK_TSAN_ATOMIC(64, uint64_t)
#undef GSCHECK_TSAN_ATOMIC

void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

}  // extern "C"
