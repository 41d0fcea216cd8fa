#pragma once
// Which attributes each API function honours (PMIX_QUERY_ATTRIBUTE_SUPPORT, `zpmix info`): one
// registry, fed by a Honours line beside the code of each function (client_api.cpp,
// client_jobctl.cpp, client_spawn.cpp, query.cpp, tool_api.cpp) and by PMIx_Register_attributes.
#include <map>
#include <string>
#include <vector>

namespace zpmix::c {

// Whose functions: the standard's PMIX_CLIENT_FUNCTIONS, _TOOL_, _SERVER_, _HOST_ classes.
enum class Role { client, tool, server, host };

struct Attribute {
    std::string name;  // the attribute's macro name ("PMIX_TIMEOUT"); its key when registered
    std::string key;   // "pmix.timeout"
};

// A static object of this type registers what `function` honours (before main).
struct Honours {
    Honours(Role role, const char *function, std::vector<Attribute> attributes);
};
#define ZPMIX_ATTR(name)    \
    ::zpmix::c::Attribute { \
#name, name         \
    }

void register_attributes(Role role, const std::string &function, std::vector<Attribute> attrs);
// function -> its attributes, for one role (a copy: the registry may grow meanwhile).
std::map<std::string, std::vector<Attribute>> attributes_of(Role role);

}  // namespace zpmix::c
