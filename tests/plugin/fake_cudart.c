/* A host-memory stand-in for the few CUDA runtime entry points gscheck's worker uses, so the
 * device-memory path runs in CI without a GPU (GSCHECK_CUDART=<this library>). Like the real
 * runtime it refuses what a GPU would: a copy or memset on memory it did not allocate (so a
 * plugin given host pointers instead of device ones fails), and any use after fork() from the
 * process that created its "context" (CUDA contexts do not survive fork). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kSuccess = 0, kInvalidValue = 1, kMemoryAllocation = 2, kInitialization = 3 };
enum { kHostToHost = 0, kHostToDevice = 1, kDeviceToHost = 2, kDeviceToDevice = 3 };

#define MAX_ALLOCS 4096
static struct {
  char* p;
  size_t n;
} allocs[MAX_ALLOCS];
static pid_t context_pid;

static int context(void) {
  if (context_pid == 0) context_pid = getpid();
  return context_pid == getpid() ? kSuccess : kInitialization;
}

/* True when [p, p+n) lies inside one allocation. */
static int on_device(const void* p, size_t n) {
  for (int i = 0; i < MAX_ALLOCS; ++i)
    if (allocs[i].p && (const char*)p >= allocs[i].p && n <= allocs[i].n &&
        (size_t)((const char*)p - allocs[i].p) <= allocs[i].n - n)
      return 1;
  return 0;
}

int cudaMalloc(void** p, size_t n) {
  if (context()) return kInitialization;
  for (int i = 0; i < MAX_ALLOCS; ++i) {
    if (allocs[i].p) continue;
    allocs[i].p = malloc(n ? n : 1);
    if (!allocs[i].p) return kMemoryAllocation;
    memset(allocs[i].p, 0x5A, n); /* device memory starts as garbage */
    allocs[i].n = n;
    *p = allocs[i].p;
    return kSuccess;
  }
  return kMemoryAllocation;
}

int cudaFree(void* p) {
  if (context()) return kInitialization;
  if (!p) return kSuccess;
  for (int i = 0; i < MAX_ALLOCS; ++i)
    if (allocs[i].p == p) {
      free(allocs[i].p);
      allocs[i].p = NULL;
      return kSuccess;
    }
  return kInvalidValue;
}

int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
  if (context()) return kInitialization;
  const int dst_dev = kind == kHostToDevice || kind == kDeviceToDevice;
  const int src_dev = kind == kDeviceToHost || kind == kDeviceToDevice;
  if ((dst_dev && !on_device(dst, n)) || (src_dev && !on_device(src, n)) ||
      (!dst_dev && on_device(dst, 1)) || (!src_dev && on_device(src, 1)))
    return kInvalidValue;
  memcpy(dst, src, n);
  return kSuccess;
}

int cudaMemset(void* p, int value, size_t n) {
  if (context()) return kInitialization;
  if (!on_device(p, n)) return kInvalidValue;
  memset(p, value, n);
  return kSuccess;
}

int cudaDeviceSynchronize(void) { return context(); }

const char* cudaGetErrorString(int e) {
  switch (e) {
    case kSuccess:
      return "no error";
    case kInvalidValue:
      return "invalid argument (fake: not device memory)";
    case kMemoryAllocation:
      return "out of memory";
    case kInitialization:
      return "initialization error (fake: used after fork)";
    default:
      return "unknown error";
  }
}
