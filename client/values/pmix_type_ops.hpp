// zpmix: the operations of the PMIx data types that are not fixed-width numbers (strings, byte
// objects, values, infos and the other structures), one TypeOps each, for the type table.
#pragma once

#include "client/values/pmix_types.hpp"

namespace zpmix::c {

extern const TypeOps kStringOps;
extern const TypeOps kByteObjectOps;  // also compressed strings and byte objects, regexes
extern const TypeOps kPointerOps;
extern const TypeOps kTimevalOps;
extern const TypeOps kNspaceOps;
extern const TypeOps kProcOps;
extern const TypeOps kValueOps;
extern const TypeOps kInfoOps;
extern const TypeOps kPdataOps;
extern const TypeOps kAppOps;
extern const TypeOps kQueryOps;
extern const TypeOps kProcInfoOps;
extern const TypeOps kDataArrayOps;
extern const TypeOps kEnvarOps;
extern const TypeOps kCoordOps;
extern const TypeOps kRegattrOps;
extern const TypeOps kCpusetOps;
extern const TypeOps kTopologyOps;
extern const TypeOps kGeometryOps;
extern const TypeOps kDeviceDistOps;
extern const TypeOps kEndpointOps;
extern const TypeOps kProcStatsOps;
extern const TypeOps kDiskStatsOps;
extern const TypeOps kNetStatsOps;
extern const TypeOps kNodeStatsOps;
extern const TypeOps kDataBufferOps;

template <class T>
pmix_value_cmp_t num(T a, T b) noexcept {
    if (a == b) return PMIX_EQUAL;
    return a > b ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER;
}

// The wire form of a value ([type, payload]) and an info ([key, flags, value]), at the top level
// of a message (value_codec.cpp); nested ones go through the PMIX_VALUE and PMIX_INFO rows.
bool value_encodable(const pmix_value_t &v, int depth);
void pack_value(Packer &pk, const pmix_value_t &v);
void pack_info(Packer &pk, const pmix_info_t &i);
pmix_status_t unpack_value(const msgpack::object &o, pmix_value_t *v, int depth);

}  // namespace zpmix::c
