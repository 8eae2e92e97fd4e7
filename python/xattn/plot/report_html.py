"""The static HTML report: index.html showing every figure (PNG, linking to its
SVG) with its table, and one line per figure that was not drawn."""
import html
import os
import tempfile

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; }
h2 { border-bottom: 1px solid #ccc; padding-top: 1em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 2em 0; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; }
.note { color: #555; margin: 0.2em 0; }
.skip { color: #8a6d3b; }
details { margin-bottom: 2em; }
"""


def _table(header, rows):
    out = ["<table><tr>%s</tr>" % "".join("<th>%s</th>" % html.escape(str(h)) for h in header)]
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(c)) for c in r))
    out.append("</table>")
    return "\n".join(out)


def write(outdir, title, meta_lines, drawn, skipped, input_notes):
    """drawn: [(Figure, [png, svg])]; skipped: [Skip]. Returns the path of index.html."""
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title><style>%s</style></head><body>"
             % (html.escape(title), STYLE), "<h1>%s</h1>" % html.escape(title)]
    for line in meta_lines:
        parts.append("<p class='note'>%s</p>" % html.escape(line))
    if drawn:
        parts.append("<ul>%s</ul>" % "".join("<li><a href='#%s'>%s</a></li>" % (html.escape(f.id), html.escape(f.title))
                                             for f, _ in drawn))
    if skipped:
        parts.append("<h2>Not drawn</h2><ul>")
        for s in skipped:
            parts.append("<li class='skip'><b>%s</b>: %s</li>" % (html.escape(s.title), html.escape(s.reason)))
        parts.append("</ul>")
    for fig, files in drawn:
        png, svg = files
        parts.append("<h2 id='%s'>%s</h2>" % (html.escape(fig.id), html.escape(fig.title)))
        for n in fig.notes:
            parts.append("<p class='note'>%s</p>" % html.escape(n))
        parts.append("<a href='%s'><img src='%s' alt='%s'></a>" % (html.escape(svg), html.escape(png), html.escape(fig.title)))
        parts.append("<p class='note'>SVG: <a href='%s'>%s</a>, gnuplot script: <a href='%s.gp'>%s.gp</a></p>"
                     % (html.escape(svg), html.escape(svg), html.escape(fig.id), html.escape(fig.id)))
        parts.append("<details open><summary>table (%d rows)</summary>%s</details>" % (len(fig.rows), _table(fig.header, fig.rows)))
    if input_notes:
        parts.append("<h2>Inputs skipped</h2><ul>%s</ul>" % "".join("<li>%s</li>" % html.escape(n) for n in input_notes))
    parts.append("</body></html>")
    path = os.path.join(outdir, "index.html")
    fd, tmp = tempfile.mkstemp(dir=outdir, prefix=".index-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    os.replace(tmp, path)
    return path
