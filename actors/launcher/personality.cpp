#include "actors/launcher/personality.hpp"

#include <elf.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "zpmix/build_config.hpp"

namespace zpmix::personality {

namespace fs = std::filesystem;

namespace {

// Bounds on what we read of a program: its section table and dynamic string table.
constexpr std::size_t kMaxSections = 4096;
constexpr std::size_t kMaxTable = 16 << 20;

std::string resolve(const std::string &program, const std::string &cwd,
                    const char *path = std::getenv("PATH")) {
    auto executable = [](const fs::path &p) {
        std::error_code ec;
        return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
    };
    if (program.find('/') != std::string::npos) {
        const fs::path p =
            program.front() == '/' || cwd.empty() ? fs::path(program) : fs::path(cwd) / program;
        return executable(p) ? p.string() : std::string();
    }
    std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const auto colon = dirs.find(':');
        const std::string_view dir = dirs.substr(0, colon);
        const fs::path p = fs::path(dir.empty() ? "." : std::string(dir)) / program;
        if (executable(p)) return p.string();
        if (colon == std::string_view::npos) return {};
        dirs.remove_prefix(colon + 1);
    }
}

template <class T>
bool read_at(std::ifstream &f, std::uint64_t offset, T *out, std::size_t count = 1) {
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char *>(out), static_cast<std::streamsize>(sizeof(T) * count));
    return static_cast<std::size_t>(f.gcount()) == sizeof(T) * count;
}

// The DT_NEEDED names of a 64-bit ELF file, from its SHT_DYNAMIC section and the string table
// that section links to.
std::vector<std::string> needed_libraries(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    Elf64_Ehdr eh{};
    if (!f || !read_at(f, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > kMaxSections)
        return {};
    std::vector<Elf64_Shdr> sections(eh.e_shnum);
    if (!read_at(f, eh.e_shoff, sections.data(), sections.size())) return {};
    std::vector<std::string> out;
    for (const auto &sh : sections) {
        if (sh.sh_type != SHT_DYNAMIC || sh.sh_link >= sections.size()) continue;
        const Elf64_Shdr &strtab = sections[sh.sh_link];
        if (sh.sh_size > kMaxTable || strtab.sh_size > kMaxTable) continue;
        std::vector<Elf64_Dyn> dyn(sh.sh_size / sizeof(Elf64_Dyn));
        std::string strings(strtab.sh_size, '\0');
        if (!read_at(f, sh.sh_offset, dyn.data(), dyn.size()) ||
            !read_at(f, strtab.sh_offset, strings.data(), strings.size()))
            continue;
        for (const auto &d : dyn) {
            if (d.d_tag == DT_NULL) break;
            if (d.d_tag == DT_NEEDED && d.d_un.d_val < strings.size())
                out.emplace_back(strings.c_str() + d.d_un.d_val);
        }
    }
    return out;
}

// The value of variable `name` in a rank's environment (name -> "name=value"), empty when unset.
std::string env_value(const std::map<std::string, std::string> &env, const std::string &name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second.substr(name.size() + 1);
}

// An Open MPI parameter's value in its parameter files ("name = value" lines, '#' comments), the
// first file that sets it winning, as Open MPI reads them; nullopt when none of the files exists
// (an installation we do not know: its own file may set anything).
std::optional<std::string> mca_file_value(const std::vector<std::string> &files,
                                          const std::string &name) {
    auto trim = [](const std::string &s) {
        const auto b = s.find_first_not_of(" \t\r");
        return b == std::string::npos ? std::string()
                                      : s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
    };
    bool any = false;
    for (const auto &file : files) {
        std::ifstream in(file);
        if (!in) continue;
        any = true;
        std::optional<std::string> value;
        for (std::string line; std::getline(in, line);) {
            line = line.substr(0, line.find('#'));
            const auto eq = line.find('=');
            if (eq == std::string::npos) continue;
            if (trim(line.substr(0, eq)) == name) value = trim(line.substr(eq + 1));
        }
        if (value) return value;
    }
    return any ? std::optional<std::string>(std::string()) : std::nullopt;
}

// Open MPI's parameter files for a rank of this environment: mca_base_param_files when set,
// else the user's file and the installation's (from OPAL_SYSCONFDIR, OPAL_PREFIX, the prefix of
// the mpirun on PATH, or Debian's /etc/openmpi); none when the installation's is not found.
std::vector<std::string> mca_param_files(const std::map<std::string, std::string> &env) {
    std::vector<std::string> files;
    if (const std::string listed = env_value(env, "OMPI_MCA_mca_base_param_files");
        !listed.empty()) {
        for (std::string_view rest = listed;;) {
            const auto colon = rest.find(':');
            if (colon != 0) files.emplace_back(rest.substr(0, colon));
            if (colon == std::string_view::npos) return files;
            rest.remove_prefix(colon + 1);
        }
    }
    if (const std::string home = env_value(env, "HOME"); !home.empty())
        files.push_back(home + "/.openmpi/mca-params.conf");
    std::vector<fs::path> etc;
    if (const std::string d = env_value(env, "OPAL_SYSCONFDIR"); !d.empty()) etc.emplace_back(d);
    if (const std::string p = env_value(env, "OPAL_PREFIX"); !p.empty())
        etc.push_back(fs::path(p) / "etc");
    const std::string path = env_value(env, "PATH");
    const std::string mpirun = resolve("mpirun", "", path.empty() ? nullptr : path.c_str());
    if (!mpirun.empty()) {
        std::error_code ec;
        const fs::path real = fs::canonical(mpirun, ec);
        if (!ec) etc.push_back(real.parent_path().parent_path() / "etc");
    }
    etc.emplace_back("/etc/openmpi");
    for (const auto &dir : etc) {
        std::error_code ec;
        if (fs::exists(dir / "openmpi-mca-params.conf", ec)) {
            files.push_back((dir / "openmpi-mca-params.conf").string());
            return files;
        }
    }
    return {};
}

}  // namespace

bool links_libmpi(const std::string &program, const std::string &cwd) {
    const std::string path = resolve(program, cwd);
    if (path.empty()) return false;
    for (const auto &lib : needed_libraries(path))
        if (lib.starts_with("libmpi.so") || lib.starts_with("libmpi_")) return true;
    return false;
}

std::string library_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path build_root = fs::path(build::build_libdir).parent_path();
    if (!ec && !build_root.empty()) {
        auto [b, e] = std::mismatch(build_root.begin(), build_root.end(), exe.begin(), exe.end());
        if (b == build_root.end()) return build::build_libdir;
    }
    return (exe.parent_path() / build::bin_to_libdir).lexically_normal().string();
}

void apply_ompi(std::map<std::string, std::string> &env, const std::string &lib_dir,
                bool oversubscribed) {
    const std::string ld = env_value(env, "LD_LIBRARY_PATH");
    env["LD_LIBRARY_PATH"] = "LD_LIBRARY_PATH=" + lib_dir + (ld.empty() ? "" : ":" + ld);
    // Open MPI's schizo components decide, in MPI_Init, how a rank was launched, and may override
    // OMPI_MCA_ess. A rank of mpirun has its orted's URI (OMPI_MCA_orte_local_daemon_uri): every
    // component then says "launched natively" and sets ess=pmi. Without it, schizo/orte makes a
    // singleton of the rank outside Slurm, and schizo/slurm inside an allocation but outside a
    // step (a batch script, brokers started over rsh) does the same (ess=singleton), which then
    // fails to start its own orted. A URI of no orted would send the ranks' help messages to it:
    // those two components are excluded instead, and ess/pmi asks PMIx_Init, i.e. zpmix, inside
    // and outside Slurm (flux and jsm, the others, choose ess/pmi themselves).
    env.try_emplace("OMPI_MCA_schizo", "OMPI_MCA_schizo=^orte,slurm");
    // What mpirun's schizo/orte sets for the ranks it launches: only ess/pmi is opened (not env,
    // hnp, slurm and tool too), and a rank that cannot reach its PMIx server fails MPI_Init,
    // loudly, instead of running alone as a job of size 1.
    env.try_emplace("OMPI_MCA_ess", "OMPI_MCA_ess=pmi");
    // What mpirun sets for every rank: 1 when the node has more ranks than slots. Open MPI then
    // defaults mpi_yield_when_idle to 1; spinning ranks that share a core otherwise take turns
    // of a scheduler tick each, and a collective costs milliseconds.
    env.try_emplace("OMPI_MCA_mpi_oversubscribe",
                    std::string("OMPI_MCA_mpi_oversubscribe=") + (oversubscribed ? "1" : "0"));
    // What mpirun sets too, so that MPI_Init does not open the PMI components it cannot use nor
    // query every shared-memory component.
    env.try_emplace("OMPI_MCA_pmix", "OMPI_MCA_pmix=^s1,s2,cray,isolated");
    env.try_emplace("OMPI_MCA_shmem_RUNTIME_QUERY_hint", "OMPI_MCA_shmem_RUNTIME_QUERY_hint=mmap");
    // Not mpirun's: loading the psm and psm2 transports costs MPI_Init ~100 ms each, their
    // devices present or not (their libraries calibrate the CPU clock in a constructor, sleeping
    // 125 us 800 times), and without the device they decline. Where the node lacks it, they are
    // added to the installation's exclusions.
    if (!env.contains("OMPI_MCA_mtl"))
        if (const auto mtl = mtl_without_absent_devices(env, "/dev"))
            env["OMPI_MCA_mtl"] = "OMPI_MCA_mtl=" + *mtl;
}

std::optional<std::string> mtl_without_absent_devices(const std::map<std::string, std::string> &env,
                                                      const std::string &dev_dir) {
    bool omni_path = false, infinipath = false;  // /dev/hfi1*, /dev/ipath* (qib)
    std::error_code ec;
    for (fs::directory_iterator it(dev_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        omni_path = omni_path || name.starts_with("hfi1");
        infinipath = infinipath || name.starts_with("ipath");
    }
    if (omni_path && infinipath) return std::nullopt;
    const auto current = mca_file_value(mca_param_files(env), "mtl");
    if (!current || (!current->empty() && current->front() != '^')) return std::nullopt;
    std::string mtl = current->empty() ? "^" : *current;
    auto exclude = [&](const std::string &component) {
        if (("," + mtl.substr(1) + ",").find("," + component + ",") == std::string::npos)
            mtl += (mtl.size() > 1 ? "," : "") + component;
    };
    if (!omni_path) exclude("psm2");
    if (!infinipath) exclude("psm");
    return mtl;
}

bool oversubscribes(std::size_t n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return false;
    return n > static_cast<std::size_t>(CPU_COUNT(&set));
}

}  // namespace zpmix::personality
