#pragma once
// ZPMIX_MSG_MAP(fields...): a message struct's msgpack adaptor, a map keyed by field name. The
// wire format is MSGPACK_DEFINE_MAP's; decoding is not. Messages are read from their bytes by
// msg::Reader (msgpack_read); a struct nested in an object tree (a cached blob unpacked by
// msgpack-c) is converted by unpack_map. msgpack-c's own map converter builds a std::map of the
// keys for every struct, which on the hot paths was most of a message's cost; both decoders scan
// the map once, ignore unknown keys and leave absent fields at their defaults.
// Every member is a template, so that a file instantiates the codecs of the messages it sends or
// reads, not those of every message its headers declare (-7% to -20% of a file's compile time).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <msgpack.hpp>

#include "actors/protocol/reader.hpp"

namespace zpmix::msg::detail {

template <class Tuple, std::size_t... I>
void unpack_map(const msgpack::object &o, const Tuple &fields, std::index_sequence<I...>) {
    if (o.type != msgpack::type::MAP) throw msgpack::type_error();
    for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        const msgpack::object_kv &kv = o.via.map.ptr[i];
        if (kv.key.type != msgpack::type::STR) throw msgpack::type_error();
        const std::string_view key(kv.key.via.str.ptr, kv.key.via.str.size);
        (void)((key == std::string_view(std::get<2 * I>(fields))
                    ? (kv.val.convert(std::get<2 * I + 1>(fields)), true)
                    : false) ||
               ...);
    }
}

template <class... Args>
void unpack_map(const msgpack::object &o, const msgpack::type::define_map<Args...> &m) {
    static_assert(sizeof...(Args) % 2 == 0);
    unpack_map(o, m.a, std::make_index_sequence<sizeof...(Args) / 2>{});
}

template <class Tuple, class F, std::size_t... I>
void visit_fields(const Tuple &fields, F &f, std::index_sequence<I...>) {
    (f(std::string_view(std::get<2 * I>(fields)), std::get<2 * I + 1>(fields)), ...);
}

template <class Tuple, class F>
void visit_fields(const Tuple &fields, F &f) {
    visit_fields(fields, f, std::make_index_sequence<std::tuple_size_v<Tuple> / 2>{});
}

}  // namespace zpmix::msg::detail

#define ZPMIX_MSG_MAP(...)                                                                     \
    template <typename Packer>                                                                 \
    void msgpack_pack(Packer &msgpack_pk) const {                                              \
        msgpack::type::make_define_map MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__)                    \
            .msgpack_pack(msgpack_pk);                                                         \
    }                                                                                          \
    template <typename Object = msgpack::object>                                               \
    void msgpack_unpack(std::type_identity_t<Object> const &msgpack_o) {                       \
        ::zpmix::msg::detail::unpack_map(                                                      \
            msgpack_o, msgpack::type::make_define_map MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__));   \
    }                                                                                          \
    template <typename Reader>                                                                 \
    void msgpack_read(Reader &msgpack_r) {                                                     \
        ::zpmix::msg::detail::read_fields(                                                     \
            msgpack_r, msgpack::type::make_define_map MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__).a); \
    }                                                                                          \
    /* f(name, field) for every field, in order: the golden transcripts' samples */            \
    template <typename F>                                                                      \
    void zpmix_visit_fields(F &&f) {                                                           \
        ::zpmix::msg::detail::visit_fields(                                                    \
            msgpack::type::make_define_map MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__).a, f);         \
    }                                                                                          \
    template <typename MSGPACK_OBJECT>                                                         \
    void msgpack_object(MSGPACK_OBJECT *msgpack_o, msgpack::zone &msgpack_z) const {           \
        msgpack::type::make_define_map MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__)                    \
            .msgpack_object(msgpack_o, msgpack_z);                                             \
    }
