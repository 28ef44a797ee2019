"""What the validation generators share: a page is written whole or not at all."""
import os


def write_whole(path, text):
    """Writes text to path through a temporary file renamed over it, so that an interrupted
    generator leaves the previous page, never half of a new one."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
