// `zpmix --roff-options COMMAND`: the OPTIONS section of COMMAND's man page in roff, from the
// same CLI11 definitions as its --help, so that the two never differ. The build fills the man
// page templates (man/*.1.in, at @OPTIONS@) with it.
#include <string>

#include "broker/cmd/commands.hpp"

namespace zpmix::cli {

namespace {

// Text as roff prints it: backslashes escaped, hyphens as minus signs where they start an option,
// and no line that starts with a control character.
std::string roff_text(const std::string &s) {
    std::string out;
    bool line_start = true;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\')
            out += "\\e";
        else if (c == '-' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '-' || s[i - 1] == '(' ||
                              s[i - 1] == '`' || s[i - 1] == '['))
            out += "\\-";
        else
            out += c;
        line_start = c == '\n';
    }
    return out;
}

}  // namespace

std::string roff_options(const CLI::App &cmd) {
    std::string out;
    for (const CLI::Option *o : cmd.get_options()) {
        if (o->get_group().empty()) continue;  // hidden
        std::string names;
        for (const auto &n : o->get_snames())
            names += (names.empty() ? "" : ", ") + ("\\fB\\-" + n + "\\fR");
        for (const auto &n : o->get_lnames())
            names += (names.empty() ? "" : ", ") + ("\\fB\\-\\-" + roff_text(n) + "\\fR");
        if (o->get_type_size() != 0 && !o->get_option_text().empty())
            names += " \\fI" + roff_text(o->get_option_text()) + "\\fR";
        else if (o->get_type_size() != 0 && !o->get_type_name().empty())
            names += " \\fI" + roff_text(o->get_type_name()) + "\\fR";
        out += ".TP\n" + names + "\n" + roff_text(o->get_description()) + "\n";
    }
    return out;
}

}  // namespace zpmix::cli
