#!/usr/bin/env bash
# Today's zpmix against the previous release (docs/compatibility.md): builds that release's libpmix
# and zpmix from git (the ref in tests/compat/release: its tag if this clone has it, else its
# commit), once, into BUILD/compat-release/<commit>/ (a later run reuses it), and runs
# tests/compat/compat_prog (wire-up, an event, job control, the ABI query; a tool's query and job
# control) across the two:
#   1. the release's clients under today's `zpmix run`;
#   2. today's clients under the release's `zpmix run`;
#   3. a tree of two brokers on this machine (tests/tree/local_agent), today's at the root and the
#      release's below, then the other way round;
#   4. a tool of each release attached to the other's broker;
#   5. a container-like program: linked against the release's libpmix copied into a prefix of its
#      own, run with nothing of today's on its library path, under today's broker.
# Exits 77 (skipped) when no release is recorded.
# usage: test_release.sh SOURCE_DIR BUILD_DIR [RELEASE_FILE]
set -u
src=$1 build=$2 release_file=${3:-$1/tests/compat/release}
today_zpmix=$build/bin/zpmix
today_prog=$build/tests/compat_prog

line=$(grep -v '^[[:space:]]*\(#\|$\)' "$release_file" 2>/dev/null | head -n 1)
if [ -z "$line" ]; then
    echo "no release is recorded in $release_file: skipped (the first release records itself there)"
    exit 77
fi
read -r tag commit <<<"$line"
if git -C "$src" rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null; then
    ref=$tag
elif git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null; then
    ref=$commit
else
    echo "FAIL: neither tag $tag nor commit $commit is in this clone of $src" >&2
    exit 1
fi
commit=$(git -C "$src" rev-parse "$ref^{commit}")
echo "the release: $tag ($ref, commit $commit)"

# ---- the release's libpmix and zpmix, built once (no debug information, unity batches)
cache=$build/compat-release/$commit
old=$cache/build
if [ ! -f "$cache/built" ]; then
    rm -rf "$cache"
    mkdir -p "$cache/src"
    git -C "$src" archive "$commit" | tar -x -C "$cache/src" || exit 1
    launcher=()
    if command -v ccache >/dev/null; then
        launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    started=$(date +%s)
    cmake -S "$cache/src" -B "$old" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O0 \
        -DCMAKE_CXX_FLAGS_RELEASE=-O0 -DZPMIX_WERROR=OFF -DZPMIX_UNITY_BUILD=ON "${launcher[@]}" \
        >"$cache/configure.log" 2>&1 || { cat "$cache/configure.log" >&2; exit 1; }
    # At the lowest priority: the suite's other tests run meanwhile, and wait on nothing of it.
    nice -n 19 cmake --build "$old" -j "${ZPMIX_COMPAT_JOBS:-$(nproc)}" --target pmix zpmix \
        >"$cache/build.log" 2>&1 ||
        { tail -n 50 "$cache/build.log" >&2; exit 1; }
    echo "built the release's libpmix and zpmix in $(($(date +%s) - started)) s"
    touch "$cache/built"
fi
old_zpmix=$old/bin/zpmix
"$old_zpmix" --version
"$today_zpmix" --version

# The release's compat_prog, from its own tree when it has one, against its own header and library.
prog_src=$cache/src/tests/compat/compat_prog.c
[ -f "$prog_src" ] || prog_src=$src/tests/compat/compat_prog.c
old_prog=$cache/compat_prog
if [ ! -x "$old_prog" ]; then
    cc -O1 -o "$old_prog" "$prog_src" -I"$cache/src/include" -L"$old/lib" -Wl,-rpath,"$old/lib" \
        -lpmix -lpthread || exit 1
fi
# The container: the release's libpmix alone in a prefix, the program linked against it there.
box=$cache/container
if [ ! -x "$box/bin/compat_prog" ]; then
    mkdir -p "$box/lib" "$box/bin"
    cp -P "$old"/lib/libpmix.so* "$box/lib/"
    cc -O1 -o "$box/bin/compat_prog" "$prog_src" -I"$cache/src/include" -L"$box/lib" -lpmix \
        -lpthread || exit 1
fi

export XDG_RUNTIME_DIR=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$XDG_RUNTIME_DIR" "$work"' EXIT
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# One job: ZPMIX NP WHAT [zpmix run options...] -- PROGRAM [words...]; its ranks' files gone after
# it (job control).
job() {
    local zpmix=$1 np=$2 what=$3
    shift 3
    local opts=()
    while [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    shift
    local dir=$work/$RANDOM
    mkdir -p "$dir"
    local out
    out=$(timeout 60 "$zpmix" run -q "${opts[@]}" -n "$np" "$@" job "$dir" 2>&1)
    local status=$?
    local oks
    oks=$(grep -c '^rank [0-9]* ok' <<<"$out")
    if [ $status -ne 0 ] || [ "$oks" -ne "$np" ]; then
        fail "$what: status $status, $oks of $np ranks ok"
        echo "$out" >&2
    elif ls "$dir"/rank*.seg >/dev/null 2>&1; then
        fail "$what: the files registered for cleanup are left: $(ls "$dir")"
    else
        echo "ok: $what"
    fi
}

job "$today_zpmix" 2 "the release's clients under today's zpmix run" -- "$old_prog"
job "$old_zpmix" 2 "today's clients under the release's zpmix run" -- "$today_prog"

# A tree of two brokers here: the root is the `zpmix run` started, the other broker is started
# through an agent that runs the other release's zpmix in its place.
agent=$work/agent
cat >"$agent" <<'EOF'
#!/bin/sh
shift
cmd=$(printf '%s' "$*" | sed "s#$ZPMIX_COMPAT_FROM#$ZPMIX_COMPAT_TO#g")
printf '%s\n' "$cmd" >>"$ZPMIX_COMPAT_AGENT_LOG"
exec sh -c "$cmd"
EOF
chmod +x "$agent"
export ZPMIX_COMPAT_AGENT_LOG=$work/agent.log
ZPMIX_COMPAT_FROM=$today_zpmix ZPMIX_COMPAT_TO=$old_zpmix \
    job "$today_zpmix" 2 "a tree of today's broker (root) and the release's" \
    --rsh-agent "$agent" -H n1,n2 -- "$today_prog"
grep -q "$old_zpmix" "$ZPMIX_COMPAT_AGENT_LOG" || fail "the release's broker did not start: $(cat "$ZPMIX_COMPAT_AGENT_LOG")"
: >"$ZPMIX_COMPAT_AGENT_LOG"
ZPMIX_COMPAT_FROM=$old_zpmix ZPMIX_COMPAT_TO=$today_zpmix \
    job "$old_zpmix" 2 "a tree of the release's broker (root) and today's" \
    --rsh-agent "$agent" -H n1,n2 -- "$old_prog"
grep -q "$today_zpmix" "$ZPMIX_COMPAT_AGENT_LOG" || fail "today's broker did not start: $(cat "$ZPMIX_COMPAT_AGENT_LOG")"

# A tool of one release attached to a job under the other's broker, while the job holds.
tool() {
    local zpmix=$1 prog=$2 tool_prog=$3 what=$4
    local dir=$work/$RANDOM
    mkdir -p "$dir"
    touch "$dir/hold"
    # Not under timeout: the tool attaches to this pid. Its rank 0 waits for DIR/go 30 s at most.
    "$zpmix" run -q -n 2 "$prog" job "$dir" >"$dir/job.out" 2>&1 &
    local run=$!
    local i=0
    while [ ! -f "$dir/ready" ] && [ $i -lt 1500 ] && kill -0 $run 2>/dev/null; do
        sleep 0.02
        i=$((i + 1))
    done
    if [ ! -f "$dir/ready" ]; then
        touch "$dir/go"
        wait $run
        fail "$what: the job did not get ready"
        cat "$dir/job.out" >&2
        return
    fi
    local out
    out=$(timeout 30 "$tool_prog" tool $run "$(cat "$dir/ready")" 2>&1)
    local status=$?
    touch "$dir/go"
    wait $run
    local job_status=$?
    if [ $status -ne 0 ] || ! grep -q '^tool ok' <<<"$out" || [ $job_status -ne 0 ]; then
        fail "$what: tool status $status, job status $job_status"
        echo "$out" >&2
        cat "$dir/job.out" >&2
    else
        echo "ok: $what"
    fi
}

tool "$today_zpmix" "$today_prog" "$old_prog" "the release's tool to today's broker"
tool "$old_zpmix" "$old_prog" "$today_prog" "today's tool to the release's broker"

# The container: the release's libpmix only, in its own prefix, under today's broker.
# Its ranks alone get the prefix's library path (`env`): today's zpmix keeps its own.
LD_LIBRARY_PATH=$box/lib ldd "$box/bin/compat_prog" | grep -q "libpmix.so.2 => $box/lib/" ||
    fail "the container's program does not load the prefix's libpmix"
job "$today_zpmix" 2 "a container of the release's libpmix alone ($box) under today's broker" \
    -- env LD_LIBRARY_PATH="$box/lib" "$box/bin/compat_prog"

[ "$fails" -eq 0 ] || exit 1
echo "all checks passed"
