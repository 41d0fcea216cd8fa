// `zpmix --roff-options COMMAND`: the OPTIONS section of COMMAND's man page in roff, from the
// same CLI11 definitions as its --help, so that the two never differ. The build fills the man
// page templates (man/*.1.in, at @OPTIONS@) with it.
#include <regex>
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

// An option's name in bold, every hyphen a minus sign.
std::string roff_name(const std::string &dashes, const std::string &name) {
    std::string out = "\\fB";
    for (char c : dashes + name) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out + "\\fR";
}

// The value's name as --help shows it, less what CLI11 appends for a validator
// (":INT in [1 - 65535]", ":NONNEGATIVE", ":{a,b}"): the description says it in words.
std::string value_name(const CLI::Option &o) {
    static const std::regex validator(
        R"(:(INT|UINT|FLOAT|NUMBER|NONNEGATIVE|POSITIVE)\b.*$|:\{.*\}$)");
    return std::regex_replace(o.get_type_name(), validator, "");
}

}  // namespace

std::string roff_options(const CLI::App &cmd) {
    std::string out;
    for (const CLI::Option *o : cmd.get_options()) {
        if (o->get_group().empty()) continue;  // hidden
        std::string names;
        for (const auto &n : o->get_snames())
            names += (names.empty() ? "" : ", ") + roff_name("-", n);
        for (const auto &n : o->get_lnames())
            names += (names.empty() ? "" : ", ") + roff_name("--", n);
        if (o->get_type_size() != 0 && !value_name(*o).empty())
            names += " \\fI" + roff_text(value_name(*o)) + "\\fR";
        out += ".TP\n" + names + "\n" + roff_text(o->get_description()) + "\n";
    }
    return out;
}

}  // namespace zpmix::cli
