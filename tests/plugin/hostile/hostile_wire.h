/* What a hostile plugin knows of gscheck's wire format (backends/plugin/wire.h), written in C as
 * a vendor would copy it: the descriptors the worker holds and the frames it sends. The plugins
 * forge these frames; a gscheck that trusts them is what the suite catches. */
#ifndef GSCHECK_TESTS_HOSTILE_WIRE_H_
#define GSCHECK_TESTS_HOSTILE_WIRE_H_

#include <stdint.h>

enum { HW_REPLY_FD = 4, HW_IN_MEM_FD = 5, HW_OUT_MEM_FD = 6 };
enum { HW_MAGIC = 0x67736377 };
enum { HW_ALLOCATED = 103, HW_RESULT = 104 };

typedef struct {
  uint32_t magic, type, size, reserved;
} hw_frame_header;

typedef struct {
  int32_t present, dtype, rank, reserved;
  uint64_t dims_offset, data_offset, data_bytes;
} hw_tensor;

/* At offset 0 of the input memfd. */
typedef struct {
  uint32_t magic;
  int32_t op, semantics, reserved;
  int64_t batch_dims, max_bytes, deadline_ns;
  uint64_t policy_offset, policy_size;
  hw_tensor inputs[6];
} hw_call;

typedef struct {
  int32_t ending, code, has_output, dtype, rank, reserved;
  uint64_t payload_offset, payload_bytes, strings_offset, strings_bytes, message_size;
} hw_result;

#endif /* GSCHECK_TESTS_HOSTILE_WIRE_H_ */
