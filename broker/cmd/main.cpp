// zpmix: the command line of the zpmix runtime (`zpmix run`, `zpmix broker`, ...).
#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "broker/cmd/commands.hpp"
#include "zpmix/build_config.hpp"

int main(int argc, char **argv) {
    CLI::App app{"zpmix: a PMIx runtime on an embedded ZeroMQ broker", "zpmix"};
    app.set_version_flag("--version", std::string("zpmix ") + zpmix::build::version);
    app.require_subcommand(1);
    int status = 0;
    zpmix::cli::add_broker_command(app, status);
    zpmix::cli::add_run_command(app, status);
    zpmix::cli::add_ctl_command(app, status);
    zpmix::cli::add_ps_command(app, status);
    zpmix::cli::add_preempt_command(app, status);
    zpmix::cli::add_events_command(app, status);
    zpmix::cli::add_notify_command(app, status);
    zpmix::cli::add_release_command(app, status);
    zpmix::cli::add_pset_command(app, status);
    zpmix::cli::add_info_command(app, status);
    zpmix::cli::add_exporter_command(app, status);
    zpmix::cli::add_keygen_command(app, status);
    std::vector<std::string> args(argv + 1, argv + argc);
    // The build's man page generator (man_page.cpp): not an option users see.
    if (args.size() == 2 && args[0] == "--roff-options") {
        try {
            std::fputs(zpmix::cli::roff_options(*app.get_subcommand(args[1])).c_str(), stdout);
            return 0;
        } catch (const CLI::OptionNotFound &) {
            return std::fprintf(stderr, "zpmix: no command %s\n", args[1].c_str()), 2;
        }
    }
    if (const auto why = zpmix::cli::mpirun_style_args(app, args); !why.empty()) {
        std::fprintf(stderr, "zpmix run: %s\n", why.c_str());
        return 1;
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
        app.parse(std::move(args));
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    } catch (const std::exception &e) {
        // Out of descriptors, memory...: a reason and a status, and the stack unwound so that
        // what the command made (an embedded broker's directory) is removed.
        std::fprintf(stderr, "zpmix: %s\n", e.what());
        return 1;
    }
    return status;
}
