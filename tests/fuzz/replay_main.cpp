// The GCC build's driver for a fuzz target: runs LLVMFuzzerTestOneInput once over every file in
// the directories named on the command line (the seed corpus and the regressions), so that every
// build replays them. A directory that does not exist is skipped (a target may have no
// regressions yet); an empty run is an error, so a misnamed corpus cannot pass unnoticed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);

int main(int argc, char **argv) {
    namespace fs = std::filesystem;
    std::size_t inputs = 0;
    for (int a = 1; a < argc; ++a) {
        const fs::path dir(argv[a]);
        if (!fs::is_directory(dir)) continue;
        std::vector<fs::path> files;
        for (const auto &e : fs::directory_iterator(dir))
            if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto &f : files) {
            std::ifstream in(f, std::ios::binary);
            const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
            if (!in.good() && !in.eof()) {
                std::fprintf(stderr, "cannot read %s\n", f.c_str());
                return 1;
            }
            // A copy of exactly the input's size, so that ASan sees a read past its end.
            std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
            std::printf("%s (%zu bytes)\n", f.c_str(), input.size());
            std::fflush(stdout);
            LLVMFuzzerTestOneInput(input.data(), input.size());
            ++inputs;
        }
    }
    std::printf("%zu inputs replayed\n", inputs);
    return inputs > 0 ? 0 : 1;
}
