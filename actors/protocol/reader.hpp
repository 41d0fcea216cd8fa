#pragma once
// msg::Reader: reads msgpack bytes straight into message structs. msgpack-c first builds an
// object tree (a zone, one node per value) and converts that; on the hot paths (every event a
// client handles, every request the broker serves) building and walking the tree was most of a
// message's decoding cost. The Reader walks the bytes once, allocates only what the struct itself
// holds, and accepts exactly what msgpack-c's converters accept, so the two stay interchangeable.
//
// Every read is bounds-checked and throws ReadError on malformed or mistyped input. A container
// may not claim more elements than there are bytes left (each element takes at least one byte),
// so a hostile length is refused before anything is reserved for it.
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zpmix::msg {

struct ReadError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Reader {
  public:
    // max_elements bounds every container too (the bytes left always do).
    Reader(const char *data, std::size_t size,
           std::size_t max_elements = std::numeric_limits<std::uint32_t>::max())
        : p_(data), end_(data + size), max_elements_(max_elements) {}
    explicit Reader(std::string_view bytes) : Reader(bytes.data(), bytes.size()) {}

    bool at_end() const { return p_ == end_; }
    const char *position() const { return p_; }
    bool next_is_str() const {
        const std::uint8_t b = peek();
        return (b & 0xe0) == 0xa0 || (b >= 0xd9 && b <= 0xdb);
    }

    // Consumes a nil if one is next.
    bool nil() {
        if (peek() != 0xc0) return false;
        ++p_;
        return true;
    }
    bool boolean() {
        const std::uint8_t b = take();
        if (b == 0xc2) return false;
        if (b == 0xc3) return true;
        throw ReadError("expected a boolean");
    }
    // An integer of either sign; `negative` says which member of the pair holds it.
    struct Integer {
        bool negative = false;
        std::uint64_t u = 0;
        std::int64_t i = 0;
    };
    Integer integer();
    double floating();  // a float, or an integer as msgpack-c converts it
    std::string_view str_or_bin();
    std::uint32_t array_header() { return container_header(0x90, 0xdc, "expected an array", 1); }
    std::uint32_t map_header() { return container_header(0x80, 0xde, "expected a map", 2); }
    // Steps over one value of any type; `depth` bounds nesting (a deeper value is an error).
    void skip(std::size_t depth = 32);
    // The bytes of the next value, stepped over.
    std::string_view raw(std::size_t depth = 32) {
        const char *begin = p_;
        skip(depth);
        return {begin, static_cast<std::size_t>(p_ - begin)};
    }

  private:
    std::uint8_t peek() const {
        if (p_ == end_) throw ReadError("truncated message");
        return static_cast<std::uint8_t>(*p_);
    }
    std::uint8_t take() {
        const std::uint8_t b = peek();
        ++p_;
        return b;
    }
    const char *bytes(std::size_t n) {
        if (static_cast<std::size_t>(end_ - p_) < n) throw ReadError("truncated message");
        const char *at = p_;
        p_ += n;
        return at;
    }
    template <class U>
    U be() {
        const auto *b = reinterpret_cast<const unsigned char *>(bytes(sizeof(U)));
        U v = 0;
        for (std::size_t k = 0; k < sizeof(U); ++k) v = static_cast<U>((v << 8) | b[k]);
        return v;
    }
    // An array's or a map's element count: `fix` | n up to 15, else the tag16 (16-bit count) or
    // tag16 + 1 (32-bit) format; each element takes at least `bytes_each` bytes of the message.
    std::uint32_t container_header(std::uint8_t fix, std::uint8_t tag16, const char *what,
                                   std::size_t bytes_each) {
        const std::uint8_t b = peek();
        const bool fixed = (b & 0xf0) == fix;
        if (!fixed && b != tag16 && b != tag16 + 1) throw ReadError(what);
        ++p_;
        const std::uint32_t n = fixed        ? b & 0x0fu
                                : b == tag16 ? be<std::uint16_t>()
                                             : be<std::uint32_t>();
        return bounded(n, bytes_each);
    }
    std::uint32_t bounded(std::uint32_t n, std::size_t bytes_each) const {
        if (static_cast<std::uint64_t>(n) * bytes_each > static_cast<std::size_t>(end_ - p_))
            throw ReadError("a container claims more elements than the message holds");
        if (n > max_elements_) throw ReadError("a container has too many elements");
        return n;
    }

    const char *p_;
    const char *end_;
    std::size_t max_elements_;
};

inline Reader::Integer Reader::integer() {
    const std::uint8_t b = take();
    Integer v;
    auto signed_value = [&v](std::int64_t x) {
        if (x < 0) {
            v.negative = true;
            v.i = x;
        } else {
            v.u = static_cast<std::uint64_t>(x);
        }
    };
    if (b <= 0x7f) {
        v.u = b;
    } else if (b >= 0xe0) {
        signed_value(static_cast<std::int8_t>(b));
    } else {
        switch (b) {
            case 0xcc:
                v.u = be<std::uint8_t>();
                break;
            case 0xcd:
                v.u = be<std::uint16_t>();
                break;
            case 0xce:
                v.u = be<std::uint32_t>();
                break;
            case 0xcf:
                v.u = be<std::uint64_t>();
                break;
            case 0xd0:
                signed_value(static_cast<std::int8_t>(be<std::uint8_t>()));
                break;
            case 0xd1:
                signed_value(static_cast<std::int16_t>(be<std::uint16_t>()));
                break;
            case 0xd2:
                signed_value(static_cast<std::int32_t>(be<std::uint32_t>()));
                break;
            case 0xd3:
                signed_value(static_cast<std::int64_t>(be<std::uint64_t>()));
                break;
            default:
                --p_;
                throw ReadError("expected an integer");
        }
    }
    return v;
}

inline double Reader::floating() {
    const std::uint8_t b = peek();
    if (b == 0xca) {
        ++p_;
        const std::uint32_t bits = be<std::uint32_t>();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    if (b == 0xcb) {
        ++p_;
        const std::uint64_t bits = be<std::uint64_t>();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
    }
    const Integer v = integer();
    return v.negative ? static_cast<double>(v.i) : static_cast<double>(v.u);
}

inline std::string_view Reader::str_or_bin() {
    const std::uint8_t b = take();
    std::size_t n;
    if ((b & 0xe0) == 0xa0) {
        n = b & 0x1f;
    } else {
        switch (b) {
            case 0xd9:
            case 0xc4:
                n = be<std::uint8_t>();
                break;
            case 0xda:
            case 0xc5:
                n = be<std::uint16_t>();
                break;
            case 0xdb:
            case 0xc6:
                n = be<std::uint32_t>();
                break;
            default:
                --p_;
                throw ReadError("expected a string");
        }
    }
    return {bytes(n), n};
}

inline void Reader::skip(std::size_t depth) {
    const std::uint8_t b = peek();
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
        ++p_;
        return;
    }
    if ((b & 0xe0) == 0xa0 || (b >= 0xc4 && b <= 0xc6) || (b >= 0xd9 && b <= 0xdb)) {
        str_or_bin();
        return;
    }
    if ((b & 0xf0) == 0x90 || b == 0xdc || b == 0xdd || (b & 0xf0) == 0x80 || b == 0xde ||
        b == 0xdf) {
        if (depth == 0) throw ReadError("message nested too deeply");
        const bool is_map = (b & 0xf0) == 0x80 || b == 0xde || b == 0xdf;
        const std::uint64_t n = is_map ? 2ull * map_header() : array_header();
        for (std::uint64_t k = 0; k < n; ++k) skip(depth - 1);
        return;
    }
    ++p_;
    switch (b) {
        case 0xca:
            bytes(4);
            return;
        case 0xcb:
            bytes(8);
            return;
        case 0xcc:
        case 0xd0:
            bytes(1);
            return;
        case 0xcd:
        case 0xd1:
            bytes(2);
            return;
        case 0xce:
        case 0xd2:
            bytes(4);
            return;
        case 0xcf:
        case 0xd3:
            bytes(8);
            return;
        case 0xd4:
            bytes(2);
            return;  // fixext: type byte + 1, 2, 4, 8, 16
        case 0xd5:
            bytes(3);
            return;
        case 0xd6:
            bytes(5);
            return;
        case 0xd7:
            bytes(9);
            return;
        case 0xd8:
            bytes(17);
            return;
        case 0xc7:
            bytes(std::size_t{be<std::uint8_t>()} + 1);
            return;
        case 0xc8:
            bytes(std::size_t{be<std::uint16_t>()} + 1);
            return;
        case 0xc9:
            bytes(std::size_t{be<std::uint32_t>()} + 1);
            return;
        default:
            --p_;
            throw ReadError("not msgpack (reserved byte 0xc1)");
    }
}

// --- typed reads: read(r, value) for every type a message field may have ------------------------

template <class T>
concept ReadableStruct = requires(T &t, Reader &r) {
    t.msgpack_read(r);
};
template <class T>
concept Integral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// msgpack-c packs vector<char> and vector<unsigned char> (not vector<signed char>) as bin.
template <class T>
concept Byte = std::is_same_v<T, char> || std::is_same_v<T, unsigned char>;

inline void read(Reader &r, bool &v) {
    v = r.boolean();
}

template <Integral T>
void read(Reader &r, T &v) {
    const Reader::Integer x = r.integer();
    if (x.negative) {
        if constexpr (std::is_unsigned_v<T>) {
            throw ReadError("a negative number for an unsigned field");
        } else {
            if (x.i < std::numeric_limits<T>::min()) throw ReadError("integer out of range");
            v = static_cast<T>(x.i);
        }
    } else {
        if (x.u > static_cast<std::make_unsigned_t<T>>(std::numeric_limits<T>::max()))
            throw ReadError("integer out of range");
        v = static_cast<T>(x.u);
    }
}

template <std::floating_point T>
void read(Reader &r, T &v) {
    v = static_cast<T>(r.floating());
}

inline void read(Reader &r, std::string &v) {
    v = r.str_or_bin();
}

template <Byte C>
void read(Reader &r, std::vector<C> &v) {
    const std::string_view s = r.str_or_bin();
    v.assign(reinterpret_cast<const C *>(s.data()),
             reinterpret_cast<const C *>(s.data()) + s.size());
}

template <ReadableStruct T>
void read(Reader &r, T &v) {
    v.msgpack_read(r);
}

template <class A, class B>
void read(Reader &r, std::pair<A, B> &v);
template <class T>
void read(Reader &r, std::vector<T> &v);
template <class T, class C>
void read(Reader &r, std::set<T, C> &v);
template <class K, class V, class C>
void read(Reader &r, std::map<K, V, C> &v);
template <class K, class V, class H, class E>
void read(Reader &r, std::unordered_map<K, V, H, E> &v);
template <class T>
void read(Reader &r, std::optional<T> &v);

template <class A, class B>
void read(Reader &r, std::pair<A, B> &v) {
    if (r.array_header() != 2) throw ReadError("expected a pair");
    read(r, v.first);
    read(r, v.second);
}

template <class T>
void read(Reader &r, std::vector<T> &v) {
    const std::uint32_t n = r.array_header();
    v.clear();
    v.resize(n);
    for (auto &e : v) read(r, e);
}

template <class T, class C>
void read(Reader &r, std::set<T, C> &v) {
    const std::uint32_t n = r.array_header();
    v.clear();
    for (std::uint32_t k = 0; k < n; ++k) {
        T e{};
        read(r, e);
        v.insert(std::move(e));
    }
}

template <class M>
void read_map(Reader &r, M &v) {
    const std::uint32_t n = r.map_header();
    v.clear();
    for (std::uint32_t k = 0; k < n; ++k) {
        typename M::key_type key{};
        read(r, key);
        typename M::mapped_type value{};
        read(r, value);
        v.insert_or_assign(std::move(key), std::move(value));
    }
}
template <class K, class V, class C>
void read(Reader &r, std::map<K, V, C> &v) {
    read_map(r, v);
}
template <class K, class V, class H, class E>
void read(Reader &r, std::unordered_map<K, V, H, E> &v) {
    read_map(r, v);
}

template <class T>
void read(Reader &r, std::optional<T> &v) {
    if (r.nil()) {
        v.reset();
        return;
    }
    T e{};
    read(r, e);
    v = std::move(e);
}

namespace detail {

template <std::size_t N>
bool key_is(std::string_view key, const char (&name)[N]) {
    return key.size() == N - 1 && std::memcmp(key.data(), name, N - 1) == 0;
}

// Reads a map keyed by field name into the fields of `fields` (name, field, name, field ...):
// unknown keys are stepped over and absent fields keep their defaults, as in unpack_map.
template <class Tuple, std::size_t... I>
void read_fields(Reader &r, const Tuple &fields, std::index_sequence<I...>) {
    const std::uint32_t n = r.map_header();
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::string_view key = r.str_or_bin();
        const bool known =
            ((key_is(key, std::get<2 * I>(fields)) ? (read(r, std::get<2 * I + 1>(fields)), true)
                                                   : false) ||
             ...);
        if (!known) r.skip();
    }
}

template <class Tuple>
void read_fields(Reader &r, const Tuple &fields) {
    constexpr std::size_t n = std::tuple_size_v<Tuple>;
    static_assert(n % 2 == 0);
    read_fields(r, fields, std::make_index_sequence<n / 2>{});
}

}  // namespace detail
}  // namespace zpmix::msg
