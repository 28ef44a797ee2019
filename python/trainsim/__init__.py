"""trainsim from Python: simulate large-scale LLM training without the machine.

    import trainsim
    r = trainsim.run("workloads/gpt-175b.yaml", gpus=1024, tp=8, pp=16)
    r.iteration_s, r.metrics["mfu"], r.breakdown["bubble"], r.memory["peak_bytes"]

    rows = trainsim.scale("workloads/gpt-175b.yaml", gpus=[256, 512, 1024], strong=True,
                          tp=8, pp=16)
    rows = trainsim.sweep({"workload": "workloads/gpt-22b.yaml", "fixed": {"gpus": 512},
                           "grid": {"tp": [2, 4], "network.global_link.bandwidth": ["25GBps", "50GBps"]}})

Each call runs trainsim's own command (the library's, libtrainsim.so) in a child process, so
results equal the command line's to the last digit. Keywords are the command's long flags with
underscores (gpus, tp, pp, micro_batch_size, fidelity, ...; True for a switch such as
sequence_parallel); `set` takes --set overrides as a dict or a list of "KEY=VALUE". trainsim's
input errors raise InputError (a ValueError) with the file, line, key and flag it names.
"""
import csv
import io
import json
import math
import numbers
import os
import shutil
import tempfile

from . import _native

__all__ = ["run", "scale", "sweep", "explain", "import_hf", "import_megatron", "Result",
           "TrainsimError", "InputError", "version", "library_path"]

library_path = _native.library_path


def version():
    """The library's version."""
    return _native.version()


class TrainsimError(Exception):
    """A trainsim command failed. message is its error line; file, line, column, key (the key's
    path in its file, such as parallelism.tensor) and flag (such as --tp) say where, None when
    it names no such place; status is the command's exit status; stderr all it printed."""

    def __init__(self, message, *, status=1, file=None, line=None, column=None, key=None,
                 flag=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.flag = flag
        self.stderr = stderr


class InputError(TrainsimError, ValueError):
    """Bad input (exit status 2): a file, a flag, a layout, or a model that does not fit."""


def _raise_for(outcome, what):
    if outcome.status == 0:
        return
    if outcome.status == 2 + 128 and not outcome.error:  # SIGINT: the caller raises it
        raise KeyboardInterrupt
    message = outcome.error or next(
        (line for line in outcome.errors.splitlines() if line.strip()), "")
    if not message:
        message = (f"trainsim: {what} ended by signal {outcome.status - 128}"
                   if outcome.status > 128 else f"trainsim: {what} failed (status {outcome.status})")
    cls = InputError if outcome.status == 2 else TrainsimError
    raise cls(message, status=outcome.status, file=outcome.file, line=outcome.line,
              column=outcome.column, key=outcome.key, flag=outcome.flag, stderr=outcome.errors)


def _scalar_text(name, value):
    """A flag's value as its text; refuses what a command line could not carry."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ValueError(f"trainsim: {name}: expected a finite number, found {value!r}")
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"trainsim: {name}: expected a number or a string, found "
                    f"{type(value).__name__} {value!r}")


def _suggest(name, names):
    import difflib
    close = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _flag_args(command, keywords, lists=()):
    """Keywords as command-line flags, checked against the command's own flag table."""
    table = _native.flags(command)
    names = {flag[2:].replace("-", "_"): flag for flag in table if flag.startswith("--")}
    args = []
    for name, value in keywords.items():
        if value is None:
            continue
        if name not in names:
            raise TypeError(f"trainsim.{command}() got an unknown keyword '{name}'"
                            f"{_suggest(name, list(names))}")
        flag = names[name]
        if flag == "--set":
            args += _set_args(value)
        elif table[flag] == "":  # a switch
            if not isinstance(value, bool):
                raise TypeError(f"trainsim: {name} is a switch: expected True or False, "
                                f"found {value!r}")
            if value:
                args.append(flag)
        elif name in lists and isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"trainsim: {name}: expected at least one value")
            args += [flag, ",".join(_scalar_text(name, v) for v in value)]
        else:
            if isinstance(value, bool):
                raise TypeError(f"trainsim: {name} takes {table[flag]}, found {value!r}")
            args += [flag, _scalar_text(name, value)]
    return args


def _set_args(overrides):
    """--set KEY=VALUE for each override of a dict {path: value} or a list of "KEY=VALUE"."""
    if isinstance(overrides, dict):
        items = [f"{k}={_scalar_text('set ' + str(k), v)}" for k, v in overrides.items()]
    elif isinstance(overrides, (list, tuple)):
        items = [_scalar_text("set", v) for v in overrides]
    else:
        raise TypeError(f"trainsim: set: expected a dict or a list of 'KEY=VALUE', found "
                        f"{type(overrides).__name__}")
    args = []
    for item in items:
        args += ["--set", item]
    return args


class _OutDir:
    """The command's --out: the caller's directory, or a private one removed afterwards."""

    def __init__(self, out):
        self.given = out is not None
        self.path = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="trainsim-")

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if not self.given:
            shutil.rmtree(self.path, ignore_errors=True)


class Result:
    """One simulated iteration: result.json (docs/outputs.md) as attributes and as a dict."""

    def __init__(self, data, summary, out_dir=None):
        self.json = data
        self.summary = summary  # what `trainsim run` prints
        self.out_dir = out_dir  # where the files are, when run() was given out=

    iteration_s = property(lambda self: self.json["metrics"]["iteration_s"])
    tokens_per_s = property(lambda self: self.json["metrics"]["tokens_per_s"])
    metrics = property(lambda self: self.json["metrics"])
    breakdown = property(lambda self: self.json["breakdown_s"])
    memory = property(lambda self: self.json["memory"])
    layout = property(lambda self: self.json["layout"])
    warnings = property(lambda self: self.json.get("warnings", []))

    def to_dict(self):
        return self.json

    def __repr__(self):
        lay = self.layout
        return (f"<trainsim.Result {self.json['workload']} on {self.json['platform']}: "
                f"{lay['gpus']} GPUs TP{lay['tensor']} PP{lay['pipeline']} DP{lay['data']}, "
                f"iteration {self.iteration_s:.4g} s, MFU {100 * self.metrics['mfu']:.2f}%>")


def run(workload, platform=None, *, out=None, **layout):
    """Simulates one iteration of `workload` (a YAML file) as `trainsim run` does and returns a
    Result. layout: run's flags (gpus, tp, pp, dp, cp, ep, micro_batch_size, schedule,
    recompute, zero_stage, fidelity, collectives, placement, ...; `set` for --set). out: a
    directory that keeps result.json (and timeline.json, report.html with timeline=True,
    report=True); by default a private one, removed."""
    if layout.get("explain"):
        raise TypeError("trainsim.run(): explain is a call of its own: "
                        "trainsim.explain(run(..., out=DIR).out_dir)")
    if out is None and (layout.get("timeline") or layout.get("report")):
        raise TypeError("trainsim.run(): timeline and report files need out=DIR to stay")
    args = ["run", _scalar_text("workload", workload)]
    if platform is not None:
        args += ["--platform", _scalar_text("platform", platform)]
    with _OutDir(out) as out_dir:
        args += _flag_args("run", dict(layout, quiet=True)) + ["--out", out_dir]
        outcome = _native.call(args)
        _raise_for(outcome, "run")
        with open(os.path.join(out_dir, "result.json"), encoding="utf-8") as f:
            data = json.load(f)
    return Result(data, outcome.output, out if out is not None else None)


def _number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _rows(path):
    """A CSV that trainsim wrote (its '#' lines are comments): a pandas DataFrame when pandas
    is installed, else a list of dicts with numbers as numbers."""
    with open(path, encoding="utf-8") as f:
        text = "".join(line for line in f if not line.startswith("#"))
    rows = [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def scale(workloads, gpus, *, weak=False, strong=False, platform=None, out=None, **layout):
    """A scaling study as `trainsim scale` runs it: one iteration per GPU count (a list),
    --weak or --strong; returns scale.csv's rows (with efficiency). workloads: one file, or one
    per GPU count for a weak study whose model grows. layout: scale's flags (tp, pp, fidelity,
    jobs, ...)."""
    if weak == strong:
        raise TypeError("trainsim.scale(): give weak=True or strong=True")
    files = [workloads] if isinstance(workloads, (str, os.PathLike)) else list(workloads)
    args = ["scale"] + [_scalar_text("workloads", w) for w in files]
    args += ["--weak" if weak else "--strong"]
    if platform is not None:
        args += ["--platform", _scalar_text("platform", platform)]
    with _OutDir(out) as out_dir:
        args += _flag_args("scale", dict(layout, gpus=list(gpus) if not isinstance(gpus, (str, int)) else gpus,
                                         quiet=True), lists=("gpus",))
        args += ["--out", out_dir]
        _raise_for(_native.call(args), "scale")
        return _rows(os.path.join(out_dir, "scale.csv"))


def sweep(spec, *, out=None, jobs=None, report=False):
    """A what-if study as `trainsim sweep` runs it: spec is a sweep file, or the same as a dict
    (workload, platform, fidelity, fixed, grid or points: docs/cli.md); returns sweep.csv's rows.
    out keeps points/ for a rerun to reuse; jobs: points at once (default: the cores)."""
    # A dict becomes a spec file in a private directory, never in out: out holds the user's
    # files too, and trainsim writes there only what it owns.
    with _OutDir(out) as out_dir, _OutDir(None) as spec_dir:
        if isinstance(spec, dict):
            path = os.path.join(spec_dir, "sweep-spec.yaml")
            with open(path, "x", encoding="utf-8") as f:
                json.dump(spec, f, allow_nan=False)  # JSON is YAML's flow style
        else:
            path = _scalar_text("spec", spec)
        args = ["sweep", path] + _flag_args(
            "sweep", {"jobs": jobs, "report": report, "quiet": True}) + ["--out", out_dir]
        _raise_for(_native.call(args), "sweep")
        return _rows(os.path.join(out_dir, "sweep.csv"))


def explain(result_dir, *, simulate=None, jobs=None):
    """`trainsim explain` on a run's directory (run(..., out=DIR)): its text, the losses and
    the changes that cut them."""
    args = ["explain", _scalar_text("result_dir", result_dir)] + _flag_args(
        "explain", {"simulate": simulate, "jobs": jobs, "quiet": True})
    outcome = _native.call(args)
    _raise_for(outcome, "explain")
    return outcome.output


def import_hf(config, **options):
    """The workload file (YAML text) `trainsim import hf CONFIG.json` writes; options:
    seq_length, global_batch_size, micro_batch_size, name."""
    outcome = _native.call(["import", "hf", _scalar_text("config", config)] +
                           _flag_args("import", options))
    _raise_for(outcome, "import hf")
    return outcome.output


def import_megatron(arguments, **options):
    """The workload file (YAML text) `trainsim import megatron -- ARGUMENTS` writes from a
    Megatron-LM launch line (a list of strings, or one string split at spaces)."""
    words = arguments.split() if isinstance(arguments, str) else [
        _scalar_text("arguments", a) for a in arguments]
    outcome = _native.call(["import", "megatron"] + _flag_args("import", options) + ["--"] + words)
    _raise_for(outcome, "import megatron")
    return outcome.output
