#!/usr/bin/env bash
# Every C and C++ source in the repository follows .clang-format, but the public headers of
# include: they lay out the standard's tables of constants and keys as aligned
# columns, which clang-format would fold.
set -euo pipefail
cd "$1"
if ! command -v clang-format >/dev/null; then
    echo "test_format: clang-format not installed (setup.sh installs it)"
    exit 77
fi
git ls-files '*.c' '*.cpp' '*.h' '*.hpp' ':!include/*.h' \
    | xargs clang-format --dry-run -Werror
