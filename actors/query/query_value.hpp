#pragma once
// Answers to queries in libpmix's wire form of a PMIx value ([type, payload], documented in
// client/values/value_codec.hpp), so that the client decodes them with the codec it uses for
// every value. Only the shapes the query keys need; tests/query checks each against the codec.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <pmix_common.h>
#include <msgpack.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/jobctl.hpp"

namespace zpmix::query {

using Packer = msgpack::packer<msgpack::sbuffer>;

// One info of an info array: its key and its value (a Blob made by the functions below).
struct Info {
    std::string key;
    msg::Blob value;
};

namespace detail {
inline msg::Blob done(const msgpack::sbuffer &b) {
    return msg::Blob(b.data(), b.data() + b.size());
}
template <class T>
msg::Blob scalar(pmix_data_type_t type, T v) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(type);
    pk.pack(v);
    return done(b);
}
}  // namespace detail

inline msg::Blob string_value(std::string_view s) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_STRING);
    pk.pack_str(static_cast<std::uint32_t>(s.size()));
    pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return detail::done(b);
}
inline msg::Blob bool_value(bool v) {
    return detail::scalar(PMIX_BOOL, v);
}
inline msg::Blob uint32_value(std::uint32_t v) {
    return detail::scalar(PMIX_UINT32, v);
}
inline msg::Blob size_value(std::uint64_t v) {
    return detail::scalar(PMIX_SIZE, v);
}
inline msg::Blob status_value(std::int32_t v) {
    return detail::scalar(PMIX_STATUS, v);
}
inline msg::Blob float_value(float v) {
    return detail::scalar(PMIX_FLOAT, v);
}

// A pmix_data_array_t of PMIX_INFO.
inline msg::Blob info_array(const std::vector<Info> &infos) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_DATA_ARRAY);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_INFO);
    pk.pack_array(static_cast<std::uint32_t>(infos.size()));
    for (const auto &i : infos) {
        pk.pack_array(3);
        pk.pack(i.key);
        pk.pack_uint32(0);  // flags
        b.write(i.value.data(), i.value.size());
    }
    return detail::done(b);
}

// A pmix_data_array_t of PMIX_STRING.
inline msg::Blob string_array(const std::vector<std::string> &items) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_DATA_ARRAY);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_STRING);
    pk.pack_array(static_cast<std::uint32_t>(items.size()));
    for (const auto &s : items) pk.pack(s);
    return detail::done(b);
}

// A pmix_data_array_t of PMIX_PROC.
inline msg::Blob proc_array(const std::vector<msg::Proc> &procs) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_DATA_ARRAY);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_PROC);
    pk.pack_array(static_cast<std::uint32_t>(procs.size()));
    for (const auto &p : procs) {
        pk.pack_array(2);
        pk.pack(p.nspace);
        pk.pack_uint32(p.rank);
    }
    return detail::done(b);
}

// One row of a process table, as pmix_proc_info_t holds it.
struct ProcInfo {
    std::string nspace;
    std::uint32_t rank = 0;
    std::string host, executable;
    std::int64_t pid = 0;
    std::int32_t exit_code = 0;
    std::uint8_t state = PMIX_PROC_STATE_UNDEF;
};

// A pmix_data_array_t of PMIX_PROC_INFO.
inline msg::Blob proc_info_array(const std::vector<ProcInfo> &rows) {
    msgpack::sbuffer b;
    Packer pk(b);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_DATA_ARRAY);
    pk.pack_array(2);
    pk.pack_uint16(PMIX_PROC_INFO);
    pk.pack_array(static_cast<std::uint32_t>(rows.size()));
    for (const auto &r : rows) {
        pk.pack_array(6);
        pk.pack_array(2);
        pk.pack(r.nspace);
        pk.pack_uint32(r.rank);
        pk.pack(r.host);
        pk.pack(r.executable);
        pk.pack_int64(r.pid);
        pk.pack_int32(r.exit_code);
        pk.pack_uint8(r.state);
    }
    return detail::done(b);
}

}  // namespace zpmix::query
