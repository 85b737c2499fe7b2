"""ctest python_wheel_venv: the pip package, built and used as a user would.

1. `pip wheel --no-build-isolation --no-deps SOURCE` builds the wheel (one
   CMake build, kept in WORK/pip-build for step 4); its files and version
   are checked.
2. The wheel is installed into a fresh `python3 -m venv` (with
   --system-site-packages: pytest, setuptools and wheel come from Debian;
   nothing is downloaded, PIP_NO_INDEX=1).
3. From WORK, outside the source tree and without PYTHONPATH, the venv's
   python imports dcpsched from the venv, then runs the golden parity
   (python/tests/test_golden.py) and python/examples/megatron_drop_in.py.
4. `pip install --no-build-isolation SOURCE` (the README's command) into a
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
                   "dcpsched/conformance/__main__.py", "dcpsched/conformance/upstream.py"):
        if needed not in names:
            sys.exit(f"{wheel.name} lacks {needed}: {sorted(names)}")
    if not any(re.fullmatch(r"dcpsched/_core\..*\.so", name) for name in names):
        sys.exit(f"{wheel.name} has no extension dcpsched/_core.*.so")
    if not wheel.name.startswith(f"dcpsched-{version}-"):
        sys.exit(f"{wheel.name}: expected version {version} (CMake's)")


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
    check_import(python, venv, work, env)
    run([python, "-c", f"import dcpsched; assert dcpsched.__version__ == {version!r}"], work, env)
    run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         source / "python" / "tests" / "test_golden.py"], work, env)
    run([python, source / "python" / "examples" / "megatron_drop_in.py"], work, env)

    venv_source = work / "venv-source"
    python = make_venv(venv_source, env)
    run([python, "-m", "pip", "install", "--no-build-isolation", source], work, env)
    check_import(python, venv_source, work, env)
    print("wheel and venv test: ok")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
