#include "attributes.hpp"

#include <mutex>

namespace zpmix::c {

namespace {

struct Registry {
    std::mutex mu;
    std::map<std::string, std::vector<Attribute>> by_role[4];
};

Registry &registry() {
    static Registry *r = new Registry;  // never destroyed: queries may run at exit
    return *r;
}

}  // namespace

Honours::Honours(Role role, const char *function, std::vector<Attribute> attributes) {
    register_attributes(role, function, std::move(attributes));
}

void register_attributes(Role role, const std::string &function, std::vector<Attribute> attrs) {
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    auto &list = r.by_role[static_cast<int>(role)][function];
    for (auto &a : attrs) {
        bool known = false;
        for (const auto &b : list) known = known || b.key == a.key;
        if (!known) list.push_back(std::move(a));
    }
}

std::map<std::string, std::vector<Attribute>> attributes_of(Role role) {
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    return r.by_role[static_cast<int>(role)];
}

}  // namespace zpmix::c
