#include "server/maps.hpp"

#include <charconv>
#include <string_view>

namespace zpmix::server {

namespace {

constexpr std::string_view kRaw = "raw:";
constexpr std::string_view kOpenPmix = "pmix[";

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const auto end = s.find(sep, at);
        out.push_back(s.substr(at, end == std::string_view::npos ? s.size() - at : end - at));
        if (end == std::string_view::npos) return out;
        at = end + 1;
    }
}

// Splits at `sep` outside brackets.
std::vector<std::string_view> split_top(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '[') ++depth;
        if (s[i] == ']') --depth;
        if (s[i] == sep && depth == 0) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    out.push_back(s.substr(start));
    return out;
}

std::optional<std::uint32_t> number(std::string_view s) {
    std::uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// "a-b" or "a": appends a..b.
bool add_range(std::string_view r, std::vector<std::uint32_t> &out) {
    const auto dash = r.find('-');
    const auto lo = number(r.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : number(r.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > (1u << 24)) return false;
    for (std::uint32_t v = *lo; v <= *hi; ++v) out.push_back(v);
    return true;
}

// OpenPMIx's node item: "name" or "prefix[W:ranges]suffix" (W: the digits' width).
bool expand_node(std::string_view item, std::vector<std::string> &out) {
    const auto open = item.find('[');
    if (open == std::string_view::npos) {
        if (item.empty()) return false;
        out.emplace_back(item);
        return true;
    }
    const auto close = item.find(']', open);
    const auto colon = item.find(':', open);
    if (close == std::string_view::npos || colon == std::string_view::npos || colon > close)
        return false;
    const auto width = number(item.substr(open + 1, colon - open - 1));
    if (!width || *width > 64) return false;
    std::vector<std::uint32_t> values;
    for (auto r : split(item.substr(colon + 1, close - colon - 1), ','))
        if (!add_range(r, values)) return false;
    const std::string_view prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (std::uint32_t v : values) {
        std::string digits = std::to_string(v);
        if (digits.size() < *width) digits.insert(0, *width - digits.size(), '0');
        out.push_back(std::string(prefix) + digits + std::string(suffix));
    }
    return true;
}

std::string_view without(std::string_view s, std::string_view prefix) {
    return s.starts_with(prefix) ? s.substr(prefix.size()) : s;
}

}  // namespace

std::string generate_regex(const std::string &nodes) {
    return std::string(kRaw) + nodes;
}

std::string generate_ppn(const std::string &ranks_per_node) {
    return std::string(kRaw) + ranks_per_node;
}

std::optional<std::vector<std::string>> parse_node_map(const std::string &map) {
    std::string_view s = map;
    std::vector<std::string> nodes;
    if (s.starts_with(kOpenPmix) && s.ends_with("]")) {
        for (auto item :
             split_top(s.substr(kOpenPmix.size(), s.size() - kOpenPmix.size() - 1), ','))
            if (!expand_node(item, nodes)) return std::nullopt;
        return nodes;
    }
    for (auto name : split(without(s, kRaw), ',')) {
        if (name.empty()) return std::nullopt;
        nodes.emplace_back(name);
    }
    return nodes;
}

std::optional<std::vector<std::vector<std::uint32_t>>> parse_proc_map(const std::string &map) {
    std::vector<std::vector<std::uint32_t>> out;
    for (auto node : split(without(map, kRaw), ';')) {
        auto &ranks = out.emplace_back();
        if (node.empty()) continue;  // a node with no rank of the job
        for (auto r : split(node, ','))
            if (!add_range(r, ranks)) return std::nullopt;
    }
    return out;
}

}  // namespace zpmix::server
