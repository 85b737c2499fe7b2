"""Builds the pip package dcpsched: python/dcpsched/ plus the extension
dcpsched._core, compiled by this project's CMake (target dcpsched_python)
with the tests and benchmarks off. The version is the CMake project's.

Where things are built: DCPSCHED_PIP_BUILD_DIR if set (the package test
points it into its ctest build directory), else build/pip/ of the source
tree; the CMake build tree is its cmake/ subdirectory and is reused by the
next build. CMake, Ninja (if present), g++, Abseil, nlohmann-json, CLI11,
pybind11, the Python headers and patchelf must be installed
(scripts/install_deps.sh).

The extension links the system's shared Abseil; the package carries those
libraries in dcpsched/.libs/, renamed and found through the extension's
$ORIGIN run path (python/bundle_libs.py), so the wheel imports where only
the C and C++ runtimes are installed.
"""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = pathlib.Path(__file__).resolve().parent
BUILD_DIR = pathlib.Path(os.environ.get("DCPSCHED_PIP_BUILD_DIR") or SOURCE_DIR / "build" / "pip")


def load_bundle_libs():
    """python/bundle_libs.py, loaded by path (it is build tooling, not part
    of the package)."""
    spec = importlib.util.spec_from_file_location("bundle_libs",
                                                  SOURCE_DIR / "python" / "bundle_libs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cmake_project_version() -> str:
    """The VERSION of project(dcpsched ...) in CMakeLists.txt."""
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    match = re.search(r"project\(dcpsched\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no project(dcpsched VERSION ...)")
    return match.group(1)


class CMakeBuildExt(build_ext):
    """build_ext that lets CMake compile dcpsched._core."""

    def build_extension(self, ext):
        cmake_dir = BUILD_DIR / "cmake"
        configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(cmake_dir),
                     "-DCMAKE_BUILD_TYPE=Release", "-DDCPSCHED_BUILD_TESTS=OFF",
                     "-DDCPSCHED_BENCH=OFF", "-DDCPSCHED_WERROR=OFF",
                     # core/ as a unity build: a third of the compile time.
                     "-DCMAKE_UNITY_BUILD=ON",
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (cmake_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(cmake_dir), "--target", "dcpsched_python",
                        "-j", jobs], check=True)
        built = sorted((cmake_dir / "python" / "dcpsched").glob("_core.*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one dcpsched/_core.*.so in {cmake_dir}, got {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)
        load_bundle_libs().bundle(target)


setup(
    version=cmake_project_version(),
    # The shipped cost profiles, profiles/*.json at the top of the tree, are
    # the package data dcpsched/profiles/ (dcpsched.cost_profile.load_profile).
    package_dir={"": "python", "dcpsched.profiles": "profiles"},
    packages=["dcpsched", "dcpsched.conformance", "dcpsched.profiles"],
    package_data={"dcpsched": ["py.typed", "*.pyi"], "dcpsched.profiles": ["*.json"]},
    ext_modules=[Extension("dcpsched._core", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt},
    options={"build": {"build_base": str(BUILD_DIR)},
             "egg_info": {"egg_base": str(BUILD_DIR)}},
    zip_safe=False,
)
