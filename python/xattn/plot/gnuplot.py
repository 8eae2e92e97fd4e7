"""Running gnuplot: one script body, drawn twice (pngcairo and svg).

A figure supplies its data as named blocks (lists of rows) and a script body
that refers to them as inline datablocks ($name), so each figure is one
self-contained .gp file next to its pictures, rerunnable by hand.
"""
import os
import shutil
import subprocess

GNUPLOT = os.environ.get("XATTN_GNUPLOT", "gnuplot")

TERMINALS = (
    ("png", "set terminal pngcairo size {w},{h} noenhanced font 'DejaVu Sans,10'"),
    ("svg", "set terminal svg size {w},{h} dynamic noenhanced font 'DejaVu Sans,10'"),
)


class GnuplotError(Exception):
    pass


def available():
    return shutil.which(GNUPLOT) is not None


def quote(text):
    """A gnuplot string literal (single quotes: no escapes but '')."""
    return "'" + str(text).replace("'", "''") + "'"


def _cell(v):
    if isinstance(v, float):
        return "%.6g" % v
    s = str(v)
    if not s or any(c.isspace() for c in s) or s.startswith("#"):
        return '"%s"' % s.replace('"', "'")
    return s


def datablock(name, rows):
    lines = ["$%s << EOD" % name]
    for r in rows:
        lines.append(" ".join(_cell(v) for v in r))
    lines.append("EOD")
    return "\n".join(lines)


def render(outdir, stem, blocks, body, size=(900, 560)):
    """Writes <stem>.gp and draws <stem>.png and <stem>.svg; returns their names."""
    data = "\n".join(datablock(k, v) for k, v in blocks.items())
    script_path = os.path.join(outdir, stem + ".gp")
    with open(script_path, "w") as f:
        f.write("# drawn by xattn plot; rerun with: gnuplot %s.gp (writes %s.png, %s.svg)\n" % (stem, stem, stem))
        f.write(data + "\n")
        for ext, term in TERMINALS:
            f.write(term.format(w=size[0], h=size[1]) + "\n")
            f.write("set output %s\n" % quote(stem + "." + ext))
            f.write(body.strip() + "\n")
            f.write("unset output\nreset\n")
    p = subprocess.run([GNUPLOT, os.path.basename(script_path)], cwd=outdir, capture_output=True, text=True)
    outs = [stem + ".png", stem + ".svg"]
    missing = [o for o in outs if not os.path.isfile(os.path.join(outdir, o))
               or os.path.getsize(os.path.join(outdir, o)) == 0]
    if p.returncode != 0 or missing:
        err = (p.stderr.strip().splitlines() or ["no message"])
        raise GnuplotError("gnuplot failed on %s.gp: %s" % (stem, " | ".join(err[-3:])))
    return outs
