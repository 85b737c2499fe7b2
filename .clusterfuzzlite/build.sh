#!/bin/bash -eu
# ClusterFuzzLite's build script: the builder runs it as $SRC/build.sh in the
# image of .clusterfuzzlite/Dockerfile, with the repository in $SRC/dcpsched
# and OSS-Fuzz's $CC, $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE, $WORK
# and $OUT set. fuzz/build.sh does the work (and works outside ClusterFuzzLite
# too: fuzz/oss_fuzz_build_test.sh runs this script the same way here).
"$SRC/dcpsched/fuzz/build.sh"
