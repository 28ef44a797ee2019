"""Reads the validation scripts' tab-separated point files: '#' comment lines, a header line
'# id<TAB>...', then one row per point."""


def read_points(path):
    """The rows of path as dicts keyed by the header's names."""
    rows, header = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("# id\t"):
                header = line[2:].rstrip("\n").split("\t")
            elif line.strip() and not line.startswith("#"):
                rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    return rows
