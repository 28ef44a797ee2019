"""What the validation generators share: a page is written whole or not at all; a trainsim run's
result.json."""
import json
import os
import subprocess
import sys


def write_whole(path, text):
    """Writes text to path through a temporary file renamed over it, so that an interrupted
    generator leaves the previous page, never half of a new one."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run_result(cmd, out, who):
    """Runs trainsim's command line cmd, which writes its results into the folder out, and
    returns its result.json; a failure stops the generator `who` with trainsim's message."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{who}: trainsim failed ({' '.join(cmd[1:3])}): {r.stderr}")
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)
