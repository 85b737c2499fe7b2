"""ctest python_wheel_venv: the pip package, built and used as a user would.

1. `pip wheel --no-build-isolation --no-deps SOURCE` builds the wheel (one
   CMake build, kept in WORK/pip-build for step 5); its files and version
   are checked: the package, dcpsched.megatron (the drop-in) and the
   conformance check, the extension and the libraries it carries in
   dcpsched/.libs/.
2. The wheel is installed into a fresh `python3 -m venv` (with
   --system-site-packages: pytest, setuptools and wheel come from Debian;
   nothing is downloaded, PIP_NO_INDEX=1).
3. The installed extension needs no library outside the wheel but the C and
   C++ runtimes, shown three ways (check_self_contained):
   - `ldd` on it, run with an environment of PATH alone (no
     LD_LIBRARY_PATH), resolves every library it needs either to a runtime
     (libc, libm, libstdc++, libgcc_s, ld-linux, libpthread, libdl,
     linux-vdso) or to a file in the venv's dcpsched/.libs/; nothing is
     "not found";
   - no library the wheel carries has a name the system's loader knows
     (`ldconfig -p`), so no system library can stand in for one: the
     renamed copies are the only candidates, wherever the wheel goes;
   - `import dcpsched` run under that same bare environment, then the
     process's own memory map (/proc/self/maps: every file it mapped): the
     system's libabsl_* files exist here, and none is mapped; every Abseil
     library mapped is the wheel's.
   (A mount namespace that hides /usr/lib would show it too, but needs
   privileges a CI container lacks; the renaming makes hiding unnecessary.)
   Then the glibc and libstdc++ versions the extension and its libraries
   need (`objdump -T`: the highest GLIBC_ and GLIBCXX_ symbol versions) are
   measured and must be the floor python/README.md states.
4. From WORK, outside the source tree and without PYTHONPATH, the venv's
   python imports dcpsched and dcpsched.megatron from the venv, runs the
   golden parity (python/tests/test_golden.py) and
   python/examples/megatron_drop_in.py, and finds the conformance check's
   default drop-in in the venv.
5. `pip install --no-build-isolation SOURCE` (the README's command) into a
   second venv, reusing step 1's CMake build, and one schedule from it.

Usage: wheel_venv_test.py SOURCE_DIR WORK_DIR
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

SCHEDULE = ("import dcpsched; print(dcpsched.schedule_dynamic_cp("
            "[(7, 5000), (8, 300), (9, 1200)], total_gpus=8, max_seq_len_per_rank=2048))")
EXPECTED = "[[[7], [7], [7], [7], [9, 8], [9, 8], [9, 8], [9, 8]]]"


DROP_IN_CHECK = """
import pathlib
import dcpsched.megatron
from dcpsched.conformance import cli
drop_in = cli._default_drop_in()
assert drop_in == pathlib.Path(dcpsched.megatron.__file__).resolve(), drop_in
assert drop_in.is_relative_to(pathlib.Path({venv!r}).resolve()), drop_in
assert callable(dcpsched.megatron.install_into_megatron)
"""


def run(command, cwd, env, capture=False):
    """Runs `command`; fails the test with its output if it fails."""
    print("+", " ".join(str(part) for part in command), flush=True)
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, text=True,
                            capture_output=capture, check=False)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {command}\n{result.stdout or ''}"
                 f"{result.stderr or ''}")
    return result.stdout


def make_venv(path, env):
    run([sys.executable, "-m", "venv", "--system-site-packages", path], path.parent, env)
    return path / "bin" / "python"


def check_import(python, venv, work, env):
    where = run([python, "-c", "import dcpsched; print(dcpsched.__file__)"], work, env, True)
    if not pathlib.Path(where.strip()).is_relative_to(venv):
        sys.exit(f"dcpsched was imported from {where.strip()}, not from the venv {venv}")
    output = run([python, "-c", SCHEDULE], work, env, True)
    if output.strip() != EXPECTED:
        sys.exit(f"schedule from the venv: {output!r}, expected {EXPECTED}")


def check_wheel(wheel, version):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("dcpsched/__init__.py", "dcpsched/_core.pyi", "dcpsched/py.typed",
                   "dcpsched/megatron.py",
                   "dcpsched/conformance/__main__.py", "dcpsched/conformance/upstream.py"):
        if needed not in names:
            sys.exit(f"{wheel.name} lacks {needed}: {sorted(names)}")
    if not any(re.fullmatch(r"dcpsched/_core\..*\.so", name) for name in names):
        sys.exit(f"{wheel.name} has no extension dcpsched/_core.*.so")
    if not any(re.fullmatch(r"dcpsched/\.libs/libabsl_\w+-[0-9a-f]{8}\.so\..*", name)
               for name in names):
        sys.exit(f"{wheel.name} carries no Abseil library in dcpsched/.libs/")
    if not wheel.name.startswith(f"dcpsched-{version}-"):
        sys.exit(f"{wheel.name}: expected version {version} (CMake's)")


# The C and C++ runtimes: the only libraries the extension may take from the
# system (python/bundle_libs.py's RUNTIME_LIBRARIES).
RUNTIMES = re.compile(r"^(linux-vdso|ld-linux(-[\w-]+)?|libc|libm|libstdc\+\+|libgcc_s|"
                      r"libpthread|libdl)\.so(\.[\d.]+)?$")
# What python/README.md says the wheel needs.
FLOOR = re.compile(r"glibc (\d+\.\d+) or newer and libstdc\+\+ with GLIBCXX_(3\.4\.\d+)")


def bare_env(env):
    """PATH and the pip variables alone: no LD_LIBRARY_PATH, no LD_PRELOAD."""
    return {key: value for key, value in env.items()
            if key in ("PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE")}


def installed_extension(python, work, env):
    where = run([python, "-c", "import dcpsched._core as c; print(c.__file__)"], work,
                bare_env(env), True)
    return pathlib.Path(where.strip())


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def measured_floor(files):
    """(highest GLIBC_ version, highest GLIBCXX_ version) the files'
    dynamic symbols reference (objdump -T)."""
    glibc, glibcxx = "0", "0"
    for path in files:
        symbols = "\n".join(  # the symbols it takes from elsewhere
            line for line in subprocess.run(["objdump", "-T", str(path)], check=True,
                                            capture_output=True, text=True).stdout.splitlines()
            if "*UND*" in line)
        for version in re.findall(r"\bGLIBC_(\d+(?:\.\d+)+)", symbols):
            glibc = max(glibc, version, key=version_key)
        for version in re.findall(r"\bGLIBCXX_(\d+(?:\.\d+)+)", symbols):
            glibcxx = max(glibcxx, version, key=version_key)
    return glibc, glibcxx


def check_self_contained(python, venv, source, work, env):
    """Step 3 of the docstring: the installed extension resolves nothing
    outside the wheel but the runtimes, and needs the documented floor."""
    extension = installed_extension(python, work, env)
    libs = extension.parent / ".libs"
    bundled = sorted(libs.iterdir())
    if not extension.is_relative_to(venv) or not bundled:
        sys.exit(f"the extension {extension} is not the venv's, or carries no libraries")
    lines = run(["ldd", extension], work, bare_env(env), True).splitlines()
    resolved = 0
    for line in lines:
        match = re.match(r"^\s*(\S+)\s+=>\s+(.*?)(\s+\(0x[0-9a-f]+\))?$", line)
        if not match:
            continue  # the loader itself, the vDSO: "path (address)"
        name, where = match.group(1), match.group(2)
        if where == "not found":
            sys.exit(f"ldd {extension}: {name} not found:\n" + "\n".join(lines))
        if not RUNTIMES.match(name) and pathlib.Path(where).parent.resolve() != libs.resolve():
            sys.exit(f"ldd {extension}: {name} resolves to {where}, outside the wheel and "
                     "not a C or C++ runtime:\n" + "\n".join(lines))
        resolved += not RUNTIMES.match(name)
    if resolved != len(bundled):
        sys.exit(f"ldd resolves {resolved} libraries into {libs}, which holds {len(bundled)}")
    system_names = run(["/sbin/ldconfig", "-p"], work, bare_env(env), True)
    for library in bundled:
        if f"{library.name} " in system_names:
            sys.exit(f"the system's loader knows a library named {library.name}: the wheel's "
                     "copy could be shadowed")
    maps = run([python, "-c", "import dcpsched, dcpsched.megatron; "
                "print(open('/proc/self/maps').read())"], work, bare_env(env), True)
    loaded = set(re.findall(r"\s(/\S+)$", maps, re.M))
    absl_loaded = {path for path in loaded if "libabsl_" in pathlib.Path(path).name}
    outside = sorted(path for path in absl_loaded
                     if pathlib.Path(path).parent.resolve() != libs.resolve())
    if outside or len(absl_loaded) != len(bundled):
        sys.exit(f"import dcpsched loaded Abseil from {outside} (of {len(absl_loaded)} "
                 f"Abseil libraries loaded; the wheel carries {len(bundled)})")
    system_absl = sorted(pathlib.Path("/usr/lib").glob("*/libabsl_*.so.*"))
    print(f"self-contained: {len(bundled)} libraries in {libs}; ldd resolves nothing else "
          f"but the runtimes; the import loaded {len(absl_loaded)} Abseil libraries, all the "
          f"wheel's ({len(system_absl)} system libabsl files present, none loaded)")
    glibc, glibcxx = measured_floor([extension] + bundled)
    stated = FLOOR.search((source / "python" / "README.md").read_text())
    if not stated or stated.groups() != (glibc, glibcxx):
        sys.exit(f"the extension needs glibc {glibc} and GLIBCXX_{glibcxx}; python/README.md "
                 f"says {stated.groups() if stated else 'nothing'} ('glibc X.Y or newer and "
                 "libstdc++ with GLIBCXX_3.4.Z')")
    print(f"floor: glibc {glibc}, GLIBCXX_{glibcxx} (as python/README.md states)")


def main(source, work):
    source, work = pathlib.Path(source).resolve(), pathlib.Path(work).resolve()
    shutil.rmtree(work / "venv", ignore_errors=True)
    shutil.rmtree(work / "venv-source", ignore_errors=True)
    shutil.rmtree(work / "wheels", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS", "VIRTUAL_ENV")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1",
               DCPSCHED_PIP_BUILD_DIR=str(work / "pip-build"))
    version = re.search(r"project\(dcpsched\s+VERSION\s+([0-9.]+)",
                        (source / "CMakeLists.txt").read_text()).group(1)

    venv = work / "venv"
    python = make_venv(venv, env)
    run([python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", source,
         "-w", work / "wheels"], work, env)
    wheels = sorted((work / "wheels").glob("dcpsched-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel, got {wheels}")
    check_wheel(wheels[0], version)
    run([python, "-m", "pip", "install", "--no-deps", wheels[0]], work, env)
    check_self_contained(python, venv, source, work, env)
    check_import(python, venv, work, env)
    run([python, "-c", f"import dcpsched; assert dcpsched.__version__ == {version!r}"], work, env)
    run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         source / "python" / "tests" / "test_golden.py"], work, env)
    run([python, source / "python" / "examples" / "megatron_drop_in.py"], work, env)
    # The drop-in is the package's, and the conformance check finds it there.
    run([python, "-c", DROP_IN_CHECK.format(venv=str(venv))], work, env)

    venv_source = work / "venv-source"
    python = make_venv(venv_source, env)
    run([python, "-m", "pip", "install", "--no-build-isolation", source], work, env)
    check_import(python, venv_source, work, env)
    print("wheel and venv test: ok")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
