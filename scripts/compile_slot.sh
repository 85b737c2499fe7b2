#!/usr/bin/env bash
# A compiler launcher (CMAKE_CXX_COMPILER_LAUNCHER) that runs each compile
# once it holds one of a fixed number of slots, so that the builds the test
# command runs at once (its lanes, each a ninja -j N, and the builds its
# tests make) share the cores instead of running up to three times as many
# compilers as there are cores: a compiler that shares a core with others
# takes about a quarter more CPU time (caches), and compiling is most of
# the test command's CPU time.
#
#   DCPSCHED_COMPILE_SLOTS_FIFO=FIFO scripts/compile_slot.sh COMPILER ARGS...
#
# The slots are GNU make's jobserver scheme: FIFO is a named pipe that holds
# one byte a free slot (scripts/test.sh makes it, fills it and keeps it
# open). A compile reads a byte (the kernel queues the waiting readers: no
# polling), runs, and writes the byte back however the compiler ends.
# Without DCPSCHED_COMPILE_SLOTS_FIFO, or when it is not a named pipe, the
# compiler runs at once.
#
# With DCPSCHED_COMPILE_CPU_LOG=FILE, each compile appends one line to FILE:
# its CPU time in hundredths of a second (user + system, the compiler's and its children's), the
# directory it ran in and its output file (after -o). The stage table sums
# them per build directory: the compile time the slots' waits do not hide.
set -uo pipefail

fifo=${DCPSCHED_COMPILE_SLOTS_FIFO:-}
if [[ -z $fifo || ! -p $fifo ]]; then
  exec "$@"
fi
exec {slots}<>"$fifo"
token=
IFS= read -r -n 1 -u "$slots" token
release() {
  printf '%s' "${token:-+}" >&"$slots"
}
trap 'release; exit 130' INT TERM HUP
"$@"
status=$?
trap - INT TERM HUP
release
log=${DCPSCHED_COMPILE_CPU_LOG:-}
if [[ -n $log ]]; then
  output=
  previous=
  for argument in "$@"; do
    [[ $previous == -o ]] && output=$argument
    previous=$argument
  done
  # /proc/self/stat fields 16 and 17: the waited-for children's user and
  # system time, in clock ticks (read, a builtin: no child of its own).
  read -r -a stat </proc/$$/stat
  printf '%s\t%s\t%s\n' "$(((stat[15] + stat[16]) * 100 / $(getconf CLK_TCK)))" \
    "$PWD" "$output" >>"$log"
fi
exit "$status"
