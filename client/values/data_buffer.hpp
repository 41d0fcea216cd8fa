#pragma once
// The buffers a program packs for its own messages to peers (PMIx_Data_pack/unpack/copy/print,
// PMIx_Data_compress/decompress; bindings/c/src/values_api.cpp exports them). The format and the
// bounds on untrusted bytes: data_buffer.cpp.
#include <cstddef>
#include <cstdint>

#include "pmix_common.h"

namespace zpmix::c {

pmix_status_t data_pack(pmix_data_buffer_t *buffer, void *src, int32_t num_vals,
                        pmix_data_type_t type);
pmix_status_t data_unpack(pmix_data_buffer_t *buffer, void *dest, int32_t *max_num_values,
                          pmix_data_type_t type);
pmix_status_t data_copy(void **dest, void *src, pmix_data_type_t type);
pmix_status_t data_print(char **output, char *prefix, void *src, pmix_data_type_t type);
bool data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes);
bool data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes);

}  // namespace zpmix::c
