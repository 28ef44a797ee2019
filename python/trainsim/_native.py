"""ctypes bindings to libtrainsim.so (cli/api.h): one command line run in a child process of the
interpreter, its outputs and its first error returned as fields."""
import ctypes
import os

_LIBRARY_ENV = "TRAINSIM_LIBRARY"


class _Outcome(ctypes.Structure):
    """cli/api.h's ts_api_outcome, field for field."""

    _fields_ = [
        ("status", ctypes.c_int),
        ("output", ctypes.c_char_p),
        ("errors", ctypes.c_char_p),
        ("error", ctypes.c_char_p),
        ("error_file", ctypes.c_char_p),
        ("error_line", ctypes.c_int),
        ("error_col", ctypes.c_int),
        ("error_key", ctypes.c_char_p),
        ("error_flag", ctypes.c_char_p),
    ]


def _load():
    path = os.environ.get(_LIBRARY_ENV) or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "libtrainsim.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"trainsim: cannot load {path} ({e}); reinstall the package "
            f"(pip install --no-build-isolation --no-index ./python) or set {_LIBRARY_ENV}"
        ) from None
    lib.ts_api_call.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                ctypes.POINTER(_Outcome)]
    lib.ts_api_call.restype = ctypes.c_int
    lib.ts_api_outcome_free.argtypes = [ctypes.POINTER(_Outcome)]
    lib.ts_api_outcome_free.restype = None
    lib.ts_api_flags.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.ts_api_flags.restype = ctypes.c_int
    lib.ts_api_version.argtypes = []
    lib.ts_api_version.restype = ctypes.c_char_p
    return lib, path


_lib, library_path = _load()


def _text(raw):
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


class Outcome:
    """What one command did: status, stdout, stderr and its first error's fields."""

    __slots__ = ("status", "output", "errors", "error", "file", "line", "column", "key", "flag")

    def __init__(self, raw):
        self.status = raw.status
        self.output = _text(raw.output)
        self.errors = _text(raw.errors)
        self.error = _text(raw.error)
        self.file = _text(raw.error_file) or None
        self.line = raw.error_line or None
        self.column = raw.error_col or None
        self.key = _text(raw.error_key) or None
        self.flag = _text(raw.error_flag) or None


def call(args):
    """Runs `trainsim ARGS...` (args: strings, without the program name)."""
    encoded = [a.encode("utf-8") for a in args]
    if any(b"\0" in a for a in encoded):
        raise ValueError("trainsim: an argument holds a NUL character")
    argv = (ctypes.c_char_p * len(encoded))(*encoded)
    raw = _Outcome()
    _lib.ts_api_call(len(encoded), argv, ctypes.byref(raw))
    try:
        return Outcome(raw)
    finally:
        _lib.ts_api_outcome_free(ctypes.byref(raw))


def flags(command):
    """{flag: value name ('' for a switch)} of a command, from the library's own table."""
    size = _lib.ts_api_flags(command.encode(), None, 0)
    if size < 0:
        raise ValueError(f"trainsim: no command '{command}'")
    buf = ctypes.create_string_buffer(size + 1)
    _lib.ts_api_flags(command.encode(), buf, size + 1)
    table = {}
    for line in buf.value.decode().splitlines():
        name, _, value = line.partition("\t")
        table[name] = value
    return table


def version():
    return _lib.ts_api_version().decode()
