"""The GPU's clocks and power sampled while a benchmark runs, so that a timing can be read beside
the clock it ran at (the power limit clocks a GPU down under sustained load where a short burst
of the same kernel runs at the boost clock). Shared by the device benchmarks; reads only, never
sets a clock or a limit (METHOD.md: leave the card's settings alone). Two samplers:

    with Sampler() as smi:          # nvidia-smi every 50 ms: clocks, power, temperature and
        t0 = smi.now(); ...; t1 = smi.now()          # the clock-event reasons
        print(smi.window(t0, t1))

    nvml = Nvml()                   # NVML by ctypes every 2 ms: SM clock and power (instant)
    t0 = time.perf_counter(); ...; print(nvml.window(t0, time.perf_counter()))
"""
import ctypes
import datetime
import statistics
import os
import subprocess
import tempfile
import threading
import time

# nvidia-smi's clock-event reasons bitmask (nvml.h, nvmlClocksEventReason*): the ones that mean
# the clock was held below what the application asked for by power or heat.
POWER_CAP, HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE = 0x4, 0x8, 0x20, 0x40, 0x80
FIELDS = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"
OLD_FIELDS = FIELDS.replace("clocks_event_reasons", "clocks_throttle_reasons")


class Sampler:
    def __init__(self, period_ms=50):
        self.period_ms = period_ms
        self.proc = None

    def __enter__(self):
        fd, self.path = tempfile.mkstemp(prefix="smi", suffix=".csv")
        os.close(fd)
        for fields in (FIELDS, OLD_FIELDS):  # drivers before 535 name the reasons "throttle"
            ok = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                                capture_output=True).returncode == 0
            if ok:
                break
        self.proc = subprocess.Popen(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits",
             f"-lms={self.period_ms}", "-i", "0", "-f", self.path]) if ok else None
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
        self.samples = self._read()
        os.unlink(self.path)

    @staticmethod
    def now():
        """Local wall time, the clock nvidia-smi stamps its samples with."""
        return datetime.datetime.now()

    def _read(self):
        out = []
        with open(self.path) as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                if len(parts) != 6:
                    continue
                try:
                    t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f")
                    out.append((t, float(parts[1]), float(parts[2]), float(parts[3]),
                                float(parts[4]), int(parts[5], 16)))
                except ValueError:
                    continue
        return out

    def window(self, t0, t1):
        """(samples, mean SM MHz, mean memory MHz, mean W, peak C, reasons OR-ed) in [t0, t1];
        read after the with block has closed."""
        s = [x for x in self.samples if t0 <= x[0] <= t1]
        if not s:
            return (0, None, None, None, None, 0)
        n = len(s)
        reasons = 0
        for x in s:
            reasons |= x[5]
        return (n, sum(x[1] for x in s) / n, sum(x[2] for x in s) / n, sum(x[3] for x in s) / n,
                max(x[4] for x in s), reasons)


def window_fields(w):
    """A window as CSV fields: samples, sm_mhz, mem_mhz, power_w, temp_c, reasons (hex)."""
    n, sm, mem, pw, temp, reasons = w
    if not n:
        return [0, "", "", "", "", ""]
    return [n, f"{sm:.0f}", f"{mem:.0f}", f"{pw:.0f}", f"{temp:.0f}", f"{reasons:#x}"]


WINDOW_HEAD = ["smi_samples", "sm_mhz", "mem_mhz", "power_w", "temp_c", "event_reasons"]


class _FieldValue(ctypes.Structure):
    """nvml.h's nvmlFieldValue_t (the value union read as its unsigned int member)."""
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint),
                ("timestamp", ctypes.c_longlong), ("latencyUsec", ctypes.c_longlong),
                ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


# nvml.h NVML_FI_DEV_POWER_INSTANT: the board's power now. nvmlDeviceGetPowerUsage is a trailing
# one-second average on Ampere (except GA100) and newer GPUs (nvml.h's note on it), which says
# nothing about a kernel shorter than that.
POWER_INSTANT = 186


class Nvml:
    """SM clock (MHz), instantaneous power (W; the 1 s average where the driver lacks it) and the
    1 s average power (W) of GPU 0, sampled by a thread: samples are (t, mhz, watts, avg_watts)."""

    def __init__(self, period_s=0.002):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.h = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.h)) == 0
        self.field = _FieldValue(fieldId=POWER_INSTANT)
        self.period_s, self.samples, self.stop = period_s, [], False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def read(self):
        clk, mw = ctypes.c_uint(), ctypes.c_uint()
        self.lib.nvmlDeviceGetClockInfo(self.h, 1, ctypes.byref(clk))  # NVML_CLOCK_SM
        self.lib.nvmlDeviceGetPowerUsage(self.h, ctypes.byref(mw))
        avg = mw.value / 1000
        f = self.field
        f.nvmlReturn, f.value = -1, 0
        ok = (self.lib.nvmlDeviceGetFieldValues(self.h, 1, ctypes.byref(f)) == 0
              and f.nvmlReturn == 0)
        return clk.value, ((f.value & 0xFFFFFFFF) / 1000 if ok else avg), avg

    def close(self):
        """Stops the sampling thread; the samples stay readable."""
        self.stop = True
        self.thread.join()

    def _run(self):
        while not self.stop:
            self.samples.append((time.perf_counter(),) + self.read())
            time.sleep(self.period_s)

    def window(self, t0, t1):
        s = [x for x in self.samples if t0 <= x[0] <= t1]
        if not s:
            return None, None, 0
        return statistics.mean(x[1] for x in s), statistics.mean(x[2] for x in s), len(s)
