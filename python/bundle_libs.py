"""Makes a built extension carry its shared libraries, as auditwheel repair does.

The extension dcpsched._core links Debian's shared Abseil (some thirty
libabsl_*.so.20220623); a training container has another Abseil or none, so
a wheel that only held the extension would not import there. Debian's static
Abseil archives are not position-independent and cannot go into a shared
object, so the wheel carries the shared libraries instead:

  - every library the dynamic loader resolves for the extension (`ldd`),
    except the C and C++ runtimes (RUNTIME_LIBRARIES: every Linux has them),
    is copied into LIBS_DIR (dcpsched/.libs/) beside the extension;
  - each copy gets a name of its own, `<name>-<first 8 hex of its SHA-256>`
    before `.so` (libabsl_strings-1a2b3c4d.so.20220623), its soname set to
    it, and every DT_NEEDED entry naming a bundled library rewritten to the
    new name, in the extension and in the copies (patchelf);
  - the extension's run path becomes $ORIGIN/.libs and each copy's $ORIGIN.

So the loader can only find the copies: no system has a library of those
names, and LD_LIBRARY_PATH or a system Abseil of another version cannot
stand in for them. python/wheel_venv_test.py checks that on an installed
wheel. Needs patchelf (Debian's package patchelf).

Used by setup.py at build time; also runnable on its own:
    python3 python/bundle_libs.py EXTENSION.so
"""

import hashlib
import pathlib
import re
import shutil
import subprocess
import sys
from typing import Dict, List

# The directory, relative to the extension's, that holds the copies.
LIBS_DIR = ".libs"

# The C and C++ runtimes: present on every Linux system the wheel targets,
# never bundled (python/README.md states the glibc and libstdc++ versions
# the extension needs).
RUNTIME_LIBRARIES = re.compile(
    r"^(linux-vdso|linux-gate|ld-linux(-[\w-]+)?|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl)"
    r"\.so(\.[\d.]+)?$")

# One line of ldd's output: "name => path (address)", "name => not found",
# or "path (address)" for the loader and the vDSO.
LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(\S+|not found)")


def resolved_libraries(path: pathlib.Path) -> Dict[str, str]:
    """{DT_NEEDED name: the file the loader resolves it to} for `path` and
    everything it loads (ldd lists the closure), or "not found"."""
    output = subprocess.run(["ldd", str(path)], check=True, capture_output=True,
                            text=True).stdout
    return {match.group(1): match.group(2)
            for match in map(LDD_LINE.match, output.splitlines()) if match}


def needed(path: pathlib.Path) -> List[str]:
    """The DT_NEEDED entries of `path`, in order."""
    output = subprocess.run(["patchelf", "--print-needed", str(path)], check=True,
                            capture_output=True, text=True).stdout
    return output.split()


def bundled_name(name: str, contents: bytes) -> str:
    """libfoo.so.1 -> libfoo-<8 hex of the SHA-256 of its bytes>.so.1."""
    stem, dot, rest = name.partition(".so")
    return f"{stem}-{hashlib.sha256(contents).hexdigest()[:8]}{dot}{rest}"


def patch(path: pathlib.Path, renames: Dict[str, str], rpath: str, soname=None) -> None:
    """Rewrites path's DT_NEEDED entries by `renames`, sets its run path (and
    its soname, if given). One patchelf call per change: patchelf 0.14
    (Debian 12's) misreads several options in one call."""
    changes = [["--replace-needed", old, renames[old]] for old in needed(path)
               if old in renames]
    if soname is not None:
        changes.append(["--set-soname", soname])
    changes.append(["--set-rpath", rpath])
    for change in changes:
        subprocess.run(["patchelf", *change, str(path)], check=True)
    left = [name for name in needed(path) if name in renames]
    if left:
        raise RuntimeError(f"patchelf left {path.name} needing {left}")


def bundle(extension: pathlib.Path) -> List[pathlib.Path]:
    """Copies the libraries `extension` needs beyond the runtimes into
    LIBS_DIR beside it, renamed, and patches all of them; returns the copies.
    Raises RuntimeError if a library is not found or patchelf is missing."""
    if shutil.which("patchelf") is None:
        raise RuntimeError("bundling the extension's shared libraries needs patchelf: "
                           "apt-get install patchelf (scripts/install_deps.sh does)")
    extension = pathlib.Path(extension)
    libraries = resolved_libraries(extension)
    missing = sorted(name for name, where in libraries.items() if where == "not found")
    if missing:
        raise RuntimeError(f"{extension.name}: the loader finds no {', '.join(missing)}")
    to_bundle = {name: pathlib.Path(where) for name, where in libraries.items()
                 if not RUNTIME_LIBRARIES.match(name)}
    libs_dir = extension.parent / LIBS_DIR
    shutil.rmtree(libs_dir, ignore_errors=True)
    libs_dir.mkdir()
    renames, copies = {}, []
    for name, source in sorted(to_bundle.items()):
        contents = source.read_bytes()
        renames[name] = bundled_name(name, contents)
        copy = libs_dir / renames[name]
        copy.write_bytes(contents)
        copy.chmod(0o755)
        copies.append(copy)
    for copy in copies:
        patch(copy, renames, "$ORIGIN", soname=copy.name)
    patch(extension, renames, f"$ORIGIN/{LIBS_DIR}")
    return copies


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for bundled in bundle(pathlib.Path(sys.argv[1])):
        print(bundled)
