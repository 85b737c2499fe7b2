"""A worker process that runs upstream's calls under a timeout and a memory limit.

Upstream loops forever on some inputs, and some of those loops grow a list
without end, so its calls run in another process: a fork of the process
that loaded upstream (it inherits the loaded Upstream), made at the first
call and serving calls one after another, as Megatron-LM calls its
scheduler repeatedly in one process. Forking once rather than per call
matters: a fresh fork pays a page fault for every page it touches, about
10 ms a call, which made the run mostly system time.

A request is a module-level function and its arguments, run in the worker
as function(upstream, *args) (a module-level function pickles by
reference, and the fork has the same modules); the answer is an Answer:
the value, the exception as "Type: message" (upstream refusing the
input), or hung. Hung is a call that runs past its timeout (the worker is
killed), one that maps UPSTREAM_MEMORY_LIMIT more bytes than the worker
did when it started (MemoryError), a value that cannot be pickled, or a
worker that dies. The worker only outlives calls that return or raise an
ordinary exception: after a hung answer it is stopped, and the next call
forks a fresh one.

Messages both ways are a pickle preceded by its length (8 bytes, little
endian). The worker reads a whole request before it runs it; the parent
writes the request and reads the reply with select() against the call's
deadline, draining replies larger than a pipe holds as they come.
"""

import os
import pickle
import resource
import select
import signal
import struct
import sys
import time
from typing import Callable, Optional, Tuple

from dcpsched.conformance.checks import Answer

# Address space the worker may map beyond what it mapped when it started
# (bytes): upstream's endless loops that grow a list stop there.
UPSTREAM_MEMORY_LIMIT = 2 << 30
_LENGTH = struct.Struct("<Q")
_CHUNK = 1 << 20


class UpstreamWorker:
    """Runs upstream's calls in a forked worker process; a context manager
    that stops the worker on exit."""

    def __init__(self, upstream):
        self.upstream = upstream
        self._pid: Optional[int] = None
        self._requests = -1  # the parent's ends of the two pipes
        self._replies = -1

    def __enter__(self) -> "UpstreamWorker":
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop()

    def call(self, function: Callable, args: Tuple, timeout: float) -> Answer:
        """function(upstream, *args) in the worker, answered within `timeout`
        seconds or hung. `function` must be module-level: the request is
        pickled, the function by reference."""
        request = _message((function, args))
        if self._pid is None:
            self._start()
        try:
            answer = self._exchange(request, time.monotonic() + timeout)
        except (OSError, EOFError):  # the worker died
            answer = None
        if answer is None or answer.hung:
            self._stop()
            return Answer(hung=True)
        return answer

    def _start(self) -> None:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        sys.stdout.flush()  # else the worker holds, and may write, a copy
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(request_write)
                os.close(reply_read)
                _serve(self.upstream, request_read, reply_write)
            finally:
                os._exit(0)  # never back into the parent's code
        os.close(request_read)
        os.close(reply_write)
        os.set_blocking(request_write, False)
        self._pid, self._requests, self._replies = pid, request_write, reply_read

    def _stop(self) -> None:
        """Closes the pipes (an idle worker exits), kills a worker still in a
        call, and reaps it."""
        if self._pid is None:
            return
        os.close(self._requests)
        os.close(self._replies)
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self._pid, 0)
        self._pid, self._requests, self._replies = None, -1, -1

    def _exchange(self, request: bytes, deadline: float) -> Optional[Answer]:
        """Sends the request and reads the reply; None at the deadline."""
        unsent = memoryview(request)
        while unsent:
            if not _wait(self._requests, "w", deadline):
                return None
            unsent = unsent[os.write(self._requests, unsent[:_CHUNK]):]
        reply = bytearray()
        length = None
        while length is None or len(reply) < _LENGTH.size + length:
            if not _wait(self._replies, "r", deadline):
                return None
            chunk = os.read(self._replies, _CHUNK)
            if not chunk:
                raise EOFError("the worker died")
            reply += chunk
            if length is None and len(reply) >= _LENGTH.size:
                length = _LENGTH.unpack_from(reply)[0]
        return pickle.loads(memoryview(reply)[_LENGTH.size:])


def _wait(fd: int, direction: str, deadline: float) -> bool:
    """True once `fd` is readable ("r") or writable ("w"); False at the deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    readable, writable, _ = select.select([fd] if direction == "r" else [],
                                          [fd] if direction == "w" else [], [], left)
    return bool(readable or writable)


def _message(value) -> bytes:
    data = pickle.dumps(value)
    return _LENGTH.pack(len(data)) + data


def _read_exactly(fd: int, count: int) -> Optional[bytes]:
    """`count` bytes from `fd`; None if it ends first."""
    data = bytearray()
    while len(data) < count:
        chunk = os.read(fd, min(count - len(data), _CHUNK))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _write_all(fd: int, data: bytes) -> None:
    unsent = memoryview(data)
    while unsent:
        unsent = unsent[os.write(fd, unsent):]


def _limit_memory_growth(growth: int) -> None:
    """Lets this process map at most `growth` more bytes of address space than
    it has now (relative, since a sanitized build maps terabytes of shadow)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = mapped + growth
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _serve(upstream, requests: int, replies: int) -> None:
    """The worker: answers requests until the parent closes the pipe or a
    call ends hung (the parent would stop it anyway)."""
    _limit_memory_growth(UPSTREAM_MEMORY_LIMIT)
    while True:
        header = _read_exactly(requests, _LENGTH.size)
        if header is None:
            return
        request = _read_exactly(requests, _LENGTH.unpack(header)[0])
        if request is None:
            return
        reply = _reply(upstream, request)
        _write_all(replies, reply or _message(Answer(hung=True)))
        if reply is None:
            return


def _reply(upstream, request: bytes) -> Optional[bytes]:
    """The answer to one request, pickled; None (hung) for a MemoryError
    anywhere, a value that cannot be pickled, or anything but an ordinary
    exception."""
    try:
        function, args = pickle.loads(request)
        try:
            answer = Answer(value=function(upstream, *args))
        except MemoryError:
            return None
        except Exception as error:  # pylint: disable=broad-except
            answer = Answer(error=f"{type(error).__name__}: {error}")
        return _message(answer)
    except BaseException:  # pylint: disable=broad-except
        return None
