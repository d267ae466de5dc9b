#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ctest driver of flash_pflash_power_cut and flash_spinor_power_cut: power cuts by killing the emulator. The
# logger image (examples/pflash_logger.cpp) runs on the board's flash (PFLASH_BOARD, tests/flash/pflash_lib.sh:
# QEMU's riscv32 `virt` CFI NOR bank, or the SPI NOR of its riscv64 `sifive_u`) and QEMU is killed (PFLASH_KILL:
# SIGKILL, or SIGTERM where QEMU writes the file asynchronously) after a seeded random delay; then the recovery
# image (examples/pflash_recover.cpp) boots on the same backing file, mounts the array, reports each chunk,
# finalizes and checks every item (in place on the mapped CFI bank, through the driver on SPI NOR). The host
# checks, per point:
#   - the recovery ran to its end; "no array" only when the logger had not printed "created" (create returned);
#   - every chunk whose "appended K" line the host had read is there (a returned append is durable), at most the
#     one in flight more, and each recovered chunk is, byte for byte (CRC-32), the chunk the logger wrote there;
#   - a frame the logger finalized (its "finalized" line seen) is found finalized with all its chunks, and a
#     frame found finalized was cut in or after finalize;
#   - the finalized array (the recovery's finalize, or the logger's) reads exactly with `tessera` on the host
#     (info and every item), wherever its frame starts (a header torn in slot 0 moves it to slot 1), and a
#     second mount finds it finalized as it was;
#   - before the recovery, `tessera --flash-log` reads the killed part's file without changing it and finds the
#     same chunks, with the finalized array's items (or no array where the recovery finds none).
# The points: for each of the board's modes (CFI: through the write buffer with the default 24 chunks, word by
# word with 4; SPI NOR: 4 KiB sectors and 64 KiB blocks, 24 chunks each), a reference run gives the times of
# "finalizing" and "finalized" counted from "creating"; POINTS delays (from "creating", which the host waits
# for: QEMU's own start takes 30 to 100 ms as the machine's load goes) are spread over [0, finalized + 2 ms], one in each of POINTS equal slices at a seeded random place in it, and
# FINAL_POINTS more over [finalizing - 1 ms, finalized + 1 ms]. Where a kill really lands depends on the
# machine's timing: the run reports each point's phase (the logger's last line before the kill) and what the
# recovery found.
# The part holds old bytes before each run (the logger image's own bytes over the array's region: a used part),
# so a cut inside create leaves garbage that must not mount.
# Usage: pflash_power_cut.sh LOGGER.elf RECOVER.elf TOOL WORK_DIR   (TOOL empty: no host read of the arrays)
# Environment: PFLASH_BOARD (cfi or spinor), PFLASH_SEED (default 46), PFLASH_POINTS (default 20 per mode),
# PFLASH_FINAL_POINTS (default 5 per mode), PFLASH_KEEP=1 (keep every point's files; a failed point's are always
# kept).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logger=$1
recover=$2
tool=$3
work=$4
seed=${PFLASH_SEED:-46}
points=${PFLASH_POINTS:-20}
final_points=${PFLASH_FINAL_POINTS:-5}
word_chunks=4
# shellcheck source=tests/flash/pflash_lib.sh
. "$here/pflash_lib.sh"
# The array's region as `tessera --flash-log` names it: the bank's first 2 blocks of 256 KiB, programmed in
# words of 4 bytes (examples/pflash_array.hpp).
# The region's geometry as a host gives it to `tessera --flash-log` (the board's driver: pflash_lib.sh).
pflash_geometry() {
  case $PFLASH_BOARD:$1 in
    cfi:*) echo offset=0,size=512K,sector=256K,unit=4 ;;
    spinor:sector) echo "offset=$PFLASH_REGION_START,size=512K,sector=4K,unit=1" ;;
    spinor:block) echo "offset=$PFLASH_REGION_START,size=512K,sector=64K,unit=1" ;;
  esac
}

if [[ -n $tool && ! -x $tool ]]; then
  echo "pflash_power_cut: the tessera tool $tool does not exist (build the host first)"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
started=$EPOCHREALTIME
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }

# The part before each run: erased, with the array's region holding old bytes.
template=$work/used.img
pflash_erased "$template"
region_blocks=$((PFLASH_REGION_START / PFLASH_REGION_BYTES))  # the region, in dd blocks of its size
cat "$logger" "$logger" | head -c "$PFLASH_REGION_BYTES" |
  dd of="$template" bs="$PFLASH_REGION_BYTES" seek="$region_blocks" conv=notrunc status=none
cp "$template" "$work/bank.img"

failures=0
fail() {
  echo "pflash_power_cut: point $1: $2"
  failures=$((failures + 1))
}

# Sleeps $1 seconds without a process (read -t on a pipe nobody writes to).
exec {idle_fd}<> <(:)
pause() { read -r -t "$1" -u "$idle_fd" _ || true; }

# Returns once the file $1 has the line $2 (read whole every 0.5 ms, without a process per poll). Status 1 when
# the process $3 ended without it, or after 60 s.
wait_line() {
  local -a lines
  local line alive limit=$((SECONDS + 60))
  while ((SECONDS < limit)); do
    alive=1
    kill -0 "$3" 2>/dev/null || alive=0  # before the read: what it printed before it ended is read
    mapfile -t lines <"$1"
    for line in "${lines[@]}"; do [[ $line == "$2" ]] && return 0; done
    ((alive)) || return 1
    pause 0.0005
  done
  return 1
}

# One point: kill the logger (mode $2) $4 seconds after it printed the line $3, recover, check. $1 names it.
run_point() {
  local name=$1 mode=$2 anchor=$3 delay=$4 img=$work/bank.img log=$work/$1.log out=$work/$1.recover
  local -a args=() lines board_args
  mapfile -t board_args < <(pflash_mode_args "$mode")
  args=("${board_args[@]}")
  [[ $mode == "$PFLASH_SHORT_MODE" ]] && args+=(--chunks "$word_chunks")
  # The part as the template has it: the images write the region only, so it alone is restored.
  dd if="$template" of="$img" bs="$PFLASH_REGION_BYTES" skip="$region_blocks" seek="$region_blocks" count=1 \
    conv=notrunc status=none
  pflash_command "$img" rw "$logger" "${args[@]}"
  : >"$log"
  "${PFLASH_CMD[@]}" </dev/null >"$log" 2>&1 &
  local pid=$!
  if ! wait_line "$log" "$anchor" "$pid"; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    fail "$name" "the logger did not print \"$anchor\" (it ended, or 60 s passed):"
    sed 's/^/    /' "$log"
    return
  fi
  pause "$delay"
  kill -"$PFLASH_KILL" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null

  # What the logger had said before the kill.
  local line phase=boot appended=0 created=0 finalized_seen=0
  mapfile -t lines <"$log"
  for line in "${lines[@]}"; do
    case $line in
      creating | finalizing) phase=$line ;;
      created) phase=created created=1 ;;
      "appending "*) phase=appending ;;
      "appended "*) phase=appended appended=$((appended + 1)) ;;
      "finalized "*) phase=finalized finalized_seen=1 ;;
    esac
  done

  # The killed bank as a host reads a dump of it: `tessera --flash-log` mounts the log without writing (the file
  # keeps its bytes) and finds the chunks the recovery will find; their items are the finalized array's.
  local host_chunks='' host_none=0 sum_before
  if [[ -n $tool ]]; then
    sum_before=$(cksum <"$img")
    if "$tool" info --flash-log "$(pflash_geometry "$mode")" "$img" >"$work/$name.hostinfo" 2>&1; then
      host_chunks=$(sed -n -E 's/^flash log: .*, ([0-9]+) chunks committed, .*/\1/p' "$work/$name.hostinfo")
      "$tool" dump --flash-log "$(pflash_geometry "$mode")" "$img" --format raw -o "$work/$name.hostraw" ||
        fail "$name" "tessera dump --flash-log of the killed bank failed"
    else
      host_none=1
    fi
    [[ $(cksum <"$img") == "$sum_before" ]] || fail "$name" "tessera --flash-log changed the bank's file"
  fi

  local status=0
  pflash_run "$img" rw "$recover" "${board_args[@]}" >"$out" || status=$?
  if ((status != 0)); then
    fail "$name" "the recovery failed (exit $status) after a cut at '$phase':"
    sed 's/^/    /' "$out"
    return
  fi
  local no_array=0 n='' fin=0 torn=0 dead=0 fstart='' flen='' fchunks='' verified=0 remounted='' k crc
  local -a crcs=()
  mapfile -t lines <"$out"
  for line in "${lines[@]}"; do
    case $line in
      "no array") no_array=1 ;;
      "mounted chunks "*) read -r _ _ n _ fin _ torn _ dead <<<"$line" ;;
      "chunk "*) read -r _ k _ crc _ <<<"$line" && crcs[k]=$crc ;;
      "finalized frame_start "*) read -r _ _ fstart _ flen _ fchunks <<<"$line" ;;
      "verified "*) [[ $line == "verified $((${n:-0} * 64)) rows" ]] && verified=1 ;;
      "remounted "*) remounted=$line ;;
    esac
  done
  if ((no_array)); then
    ((created == 0)) || fail "$name" "no array after create had returned (cut at '$phase')"
    [[ -z $tool ]] || ((host_none)) || fail "$name" "tessera --flash-log found an array where the recovery finds none"
    phases["$mode: $phase -> no array"]=$((${phases["$mode: $phase -> no array"]:-0} + 1))
    return
  fi
  if [[ -z $n ]]; then
    fail "$name" "the recovery did not report a mount:"
    sed 's/^/    /' "$out"
    return
  fi
  local total=${totals[$mode]}
  ((n >= appended)) || fail "$name" "$n chunks recovered, but $appended appends had returned (cut at '$phase')"
  ((n <= appended + 1 && n <= total)) || fail "$name" "$n chunks recovered, only $appended appended (+1 in flight)"
  if ((finalized_seen)) && ! ((fin == 1 && n == total)); then
    fail "$name" "the logger had finalized $total chunks, the recovery finds $n (finalized: $fin)"
  fi
  if ((fin == 1)) && [[ $phase != finaliz* ]]; then
    fail "$name" "found finalized, but the cut fell at '$phase'"
  fi
  for ((k = 0; k < n; ++k)); do
    [[ ${crcs[k]:-none} == "${ref_crc[k]}" ]] ||
      fail "$name" "chunk $k: crc ${crcs[k]:-none}, the logger wrote ${ref_crc[k]}"
  done
  [[ $fchunks == "$n" ]] || fail "$name" "the recovery did not finalize $n chunks"
  ((verified)) || fail "$name" "the recovery did not verify the items in place"
  [[ $remounted == "remounted finalized chunks $n frame_start $fstart" ]] ||
    fail "$name" "a second mount does not find the array finalized as it was: '$remounted'"
  if [[ -n $tool && -n $flen ]]; then
    # The part's file as it is, the frame at the region's start (header slot 1 puts it further: --offset).
    pflash_check_array "$tool" "$img" $((n * 64)) $((PFLASH_REGION_START + fstart)) >"$work/$name.tool" 2>&1 ||
      fail "$name" "tessera does not read the finalized array: $(cat "$work/$name.tool")"
    # What the host read before the recovery: the same chunks (a frame found finalized reads whole either way).
    if ((n > 0)); then
      [[ $host_chunks == "$n" ]] || fail "$name" "tessera --flash-log found '${host_chunks}' chunks before the recovery, the recovery $n"
      "$tool" dump "$img" --offset $((PFLASH_REGION_START + fstart)) --format raw | cmp -s - "$work/$name.hostraw" ||
        fail "$name" "the items tessera --flash-log read before the recovery differ from the finalized array's"
    fi
  fi
  local what="$n chunks"
  ((fin)) && what+=", finalized by the logger"
  ((torn)) && what+=", $torn torn record(s)"
  ((dead)) && what+=", a torn blob (aborted)"
  ((fstart != 0)) && what+=", frame in header slot 1 (at $fstart)"
  phases["$mode: $phase -> $what"]=$((${phases["$mode: $phase -> $what"]:-0} + 1))
}

declare -A phases totals
declare -a ref_crc
RANDOM=$seed
count=0
for mode in "${PFLASH_MODES[@]}"; do
  # The reference run: the times of its lines (from its "creating", in microseconds), each chunk's CRC.
  ref=$work/reference-$mode.log
  cp "$template" "$work/reference.img"
  mapfile -t args < <(pflash_mode_args "$mode")
  [[ $mode == "$PFLASH_SHORT_MODE" ]] && args+=(--chunks "$word_chunks")
  pflash_command "$work/reference.img" rw "$logger" "${args[@]}"
  t0=$EPOCHREALTIME
  "${PFLASH_CMD[@]}" </dev/null 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$ref"
  rm -f "$work/reference.img"
  # Its lines from "creating" to "finalized": ref_us[j] microseconds after "creating", ref_text[j].
  ref_us=()
  ref_text=()
  boot_us=''
  while IFS=$'\t' read -r us text; do
    ref_us+=("$us")
    ref_text+=("$text")
  done < <(awk -v a="$t0" '$2 == "creating" { c = $1; printf "%d\n", (c - a) * 1e6 > "/dev/stderr" }
    c && !done { t = $0; sub(/^[^ ]* /, "", t); printf "%d\t%s\n", ($1 - c) * 1e6, t }
    $2 == "finalized" { done = 1 }' "$ref" 2>"$work/boot_us")
  read -r boot_us <"$work/boot_us"
  last=$((${#ref_text[@]} - 1))
  totals[$mode]=$(sed -n 's/^[0-9.]* finalized frame_start 0 frame_len [0-9]* chunks \([0-9]*\)$/\1/p' "$ref")
  if ((last < 2)) || [[ ${ref_text[last]} != finalized* || ${ref_text[last - 1]} != finalizing ]] ||
    [[ -z ${totals[$mode]} ]]; then
    echo "pflash_power_cut: the $mode reference run did not complete:"
    cat "$ref"
    exit 1
  fi
  final_us=${ref_us[last - 1]}
  done_us=${ref_us[last]}
  while read -r k crc; do
    ref_crc[k]=$crc
  done < <(sed -n 's/^[0-9.]* appended \([0-9]*\) crc \([0-9a-f]*\) .*/\1 \2/p' "$ref")
  echo "pflash_power_cut: $PFLASH_BOARD $mode, ${totals[$mode]} chunks: QEMU started in $((boot_us / 1000)) ms;" \
    "from \"creating\", finalizing at $((final_us / 1000)) ms, finalized at $((done_us / 1000)) ms"
  for ((i = 0; i < points + final_points; ++i)); do
    if ((i < points)); then  # slice i of [0, finalized + 2 ms]
      target=$(((done_us + 2000) * (i * 32768 + RANDOM) / (points * 32768)))
    else  # [finalizing - 1 ms, finalized + 1 ms]
      target=$((final_us - 1000 + (done_us - final_us + 2000) * RANDOM / 32768))
    fi
    # The kill comes `target` after "creating" as the reference run went: after the reference's last line
    # before it, as long after that line as in the reference (so a slower or faster run shifts the kill with it).
    for ((j = last; j > 0 && ref_us[j] > target; --j)); do :; done
    delay_us=$((target - ref_us[j]))
    ((delay_us > 0)) || delay_us=0
    printf -v delay '%d.%06d' $((delay_us / 1000000)) $((delay_us % 1000000))
    before=$failures
    run_point "$mode-$i" "$mode" "${ref_text[j]}" "$delay"
    count=$((count + 1))
    # A point's files (the part's 32 MiB among them) are kept when it failed (or PFLASH_KEEP=1).
    if ((failures == before)) && [[ ${PFLASH_KEEP:-0} != 1 ]]; then
      rm -f "$work/$mode-$i".*
    else
      cp "$work/bank.img" "$work/$mode-$i.img"
      echo "pflash_power_cut: point $mode-$i: killed $delay s after \"${ref_text[j]}\"" >>"$work/$mode-$i.log"
    fi
  done
done

echo "pflash_power_cut: $count kill points (seed $seed) in $(elapsed "$started") s. Where each cut fell (the logger's" \
  "last line) -> what the recovery found:"
for key in "${!phases[@]}"; do printf '  %3d  %s\n' "${phases[$key]}" "$key"; done | sort -k2
if ((failures)); then
  echo "pflash_power_cut: $failures failure(s); the files of each failed point are in $work"
  exit 1
fi
[[ ${PFLASH_KEEP:-0} == 1 ]] || rm -rf "$work"
echo "pflash_power_cut: passed"
