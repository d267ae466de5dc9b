#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Static analysis of src/, port/ and tools/ with zero findings allowed:
#   clang-tidy  the checks of .clang-tidy (tools/.clang-tidy adds one exclusion), over every translation unit of a
#               host configure's compile_commands.json (clang-14, so the flags are clang's), headers of the
#               repository included;
#   cppcheck    --enable=warning,performance,portability over the same compile commands.
# Suppressions are inline only, with their reason: `// NOLINT(check): why`, `// cppcheck-suppress id ; why`.
# Prints each finding, then one line per analyzer with its count and time; exit status 1 on any finding.
#
# Usage: ci/static-analysis.sh [BUILD_DIR]   (default build/static-analysis: configured, never built)
# Environment: TESSERA_JOBS (default 2), CLANG_TIDY (default clang-tidy-14), CPPCHECK (default cppcheck).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
dir=${1:-build/static-analysis}
[[ $dir == /* ]] || dir=$repo/$dir
jobs=${TESSERA_JOBS:-2}
tidy=${CLANG_TIDY:-clang-tidy-14}
cppcheck=${CPPCHECK:-cppcheck}

for tool in "$tidy" "$cppcheck" clang-14 clang++-14; do
  command -v "$tool" >/dev/null || { echo "ci/static-analysis.sh: $tool is missing (ci/install-deps.sh)"; exit 1; }
done

mkdir -p "$dir"
if ! CC=clang-14 CXX=clang++-14 cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF \
    -DTESSERA_BUILD_EXAMPLES=OFF >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "ci/static-analysis.sh: configure FAILED"
  exit 1
fi
db=$dir/compile_commands.json

# The translation units of the repository's own code (the codec libraries are the system's).
mapfile -t units < <(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if any(f.startswith(sys.argv[2] + "/" + d + "/") for d in ("src", "port", "tools")):
        print(f)' "$db" "$repo" | sort -u)
((${#units[@]})) || { echo "ci/static-analysis.sh: no translation unit in $db"; exit 1; }

# ---- clang-tidy: one process per unit, $jobs at a time; a finding is a "warning:" or "error:" line in our files.
start=$SECONDS
tidy_log=$dir/clang-tidy.log
repo_re=$(printf '%s' "$repo" | sed 's/[.[\*^$()+?{|]/\\&/g')
printf '%s\n' "${units[@]}" |
  xargs -P "$jobs" -I{} "$tidy" -p "$dir" --quiet --use-color=false \
    "--header-filter=^$repo_re/(src|port|tools|include)/" {} >"$tidy_log" 2>&1
grep -E "^$repo_re/.*: (warning|error): " "$tidy_log" | sort -u >"$dir/clang-tidy.findings"
tidy_count=$(wc -l <"$dir/clang-tidy.findings")
tidy_seconds=$((SECONDS - start))
if ((tidy_count)); then
  echo "---- clang-tidy findings"
  sed "s|^$repo/||" "$dir/clang-tidy.findings"
fi

# ---- cppcheck over the same units.
start=$SECONDS
mkdir -p "$dir/cppcheck"
# --project makes the file names absolute, so the filters are too.
"$cppcheck" --project="$db" --file-filter="$repo/src/*" --file-filter="$repo/port/*" --file-filter="$repo/tools/*" \
  --enable=warning,performance,portability --inline-suppr --std=c++17 -j "$jobs" --quiet \
  --cppcheck-build-dir="$dir/cppcheck" --template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
  >"$dir/cppcheck.log" 2>&1
cppcheck_status=$?
grep -E '^[^ ]+:[0-9]+:[0-9]+: [a-z]+: ' "$dir/cppcheck.log" | sort -u >"$dir/cppcheck.findings"
cppcheck_count=$(wc -l <"$dir/cppcheck.findings")
if ((cppcheck_status != 0 && cppcheck_count == 0)); then  # cppcheck itself failed: that is a finding too
  cat "$dir/cppcheck.log"
  cppcheck_count=1
fi
cppcheck_seconds=$((SECONDS - start))
if ((cppcheck_count)); then
  echo "---- cppcheck findings"
  sed "s|^$repo/||" "$dir/cppcheck.findings"
fi

echo "clang-tidy: $tidy_count findings in ${#units[@]} translation units (${tidy_seconds} s)"
echo "cppcheck:   $cppcheck_count findings (${cppcheck_seconds} s)"
((tidy_count == 0 && cppcheck_count == 0))
