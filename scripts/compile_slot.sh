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
exit "$status"
