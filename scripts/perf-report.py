#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Regenerates the performance tables and figures of docs/PERFORMANCE.md, README.md, docs/API.md
and docs/PYTHON.md from the benchmark CSVs under docs/bench, as docs/bench/current.json lists
them.

usage: scripts/perf-report.py [--check | --plots DIR] [--manifest FILE]

Each table or sentence lives in its document between two marker lines,
    <!-- perf-report:begin ID -->
    <!-- perf-report:end ID -->
and everything between them is what the manifest entry ID generates. Without options the regions
are rewritten in place. --check rewrites nothing: it prints a unified diff and exits 1 if any
region differs from what it would generate (ctest runs this). --plots DIR also redraws the
figures the manifest names (scripts/make-plots.sh, scripts/plot-cpu-scaling.py) into DIR.

Exit status: 0 up to date (or rewritten), 1 --check found a difference, 2 a manifest, CSV or
marker error (a missing CSV or column, a selection that matches no row, a marker without its
pair), with a message saying which.

Standard library only; runs from any directory (the repository is the parent of this script's
folder).

The manifest (JSON):
  documents   files whose markers are rewritten, relative to the repository
  sources     ID -> {csv, device, date, build, command, runs}: one CSV and what is known of its
              run, shown above every table made from it
  constants   ID -> {note, values: KEY -> {ITEM: number}}: figures quoted from elsewhere, not
              measured in any of the runs
  regions     the generated regions, in order; kind "table" (rows of an ndzip-bench or
              bench_cpu CSV), "side_by_side" (side_by_side.sh's CSV per dataset) or "text" (one
              paragraph from a template)
  plots       figure groups for --plots: {tool, csvs, keep}

A table has a source (or several, "sources"), a "filter" added to each of its selections, rows,
columns ({key, head, format, cells: [SPEC, ...]}, several cells shown as "a / b"), and may have
"label_head", "sort_by" (a column key) and "notes". A row is a label, an optional "key", and
named selections ("match", and any other name a value refers to; a value whose selection the row
lacks shows as "-"); "each": {NAME: [values]} repeats a row with {NAME} replaced. A selection is
{column: value or [values]}, plus "source" to take another of the table's sources; a value spec
outside a table row brings its own "select". A cell is computed from a value spec:
  {"field": COL, "row": NAME, "agg": one|total|mean|min|max|same, "count": N, "scale": X}
      one: the selection must match exactly one row; total: total bytes / total time over the
      rows (for GB/s columns); same: every row has the same value; count: the rows expected
  {"const": ID, "item": ITEM, "key": KEY}    or "by": COL to take KEY from the row's column
  {"div": [SPEC, SPEC]}, {"mul": [SPEC, SPEC]}
  {"efficiency": COL, "row": NAME, "base": NAME}  GB/s(N) / (N x GB/s of the base selection),
      N the selection's `threads`; both sides total bytes / total time
  {"table": ID, "column": KEY, "part": I, "agg": min|max, "label": LABEL, "row_key": KEY}
      a figure of another region (texts use this, so that README and PERFORMANCE.md show the
      same numbers); a row's "key" names it for this, a side-by-side row's key is its dataset
  {"side_by_side": ID, "dataset": NAME, "item": ITEM}
Formats: gbps (1 decimal from 100, 2 from 0.1, else 2 significant digits), ratio (3 decimals),
ratio4, percent (x 100, 1 decimal), times (2 decimals and x), eff (2 decimals), int, fixed1,
fixed2, fixed3, mb (bytes as MB, 1 decimal).
"""

import argparse
import csv
import difflib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MANIFEST = os.path.join(ROOT, "docs", "bench", "current.json")
BEGIN = re.compile(r"^<!-- perf-report:begin (\S+) -->$")
END = re.compile(r"^<!-- perf-report:end (\S+) -->$")
ANY_MARKER = re.compile(r"perf-report:(begin|end)\b")
TEXT_WIDTH = 100


class ReportError(Exception):
    """A manifest, CSV or marker error: reported on stderr, exit status 2."""


def fail(message):
    raise ReportError(message)


# ---------------------------------------------------------------------------------------------
# Number formats

# kind: (scale, decimals, suffix); "gbps" has its own rule in format_number.
FIXED_FORMATS = {
    "ratio": (1, 3, ""),
    "ratio4": (1, 4, ""),
    "percent": (100, 1, " %"),
    "times": (1, 2, "×"),
    "eff": (1, 2, ""),
    "int": (1, 0, ""),
    "fixed1": (1, 1, ""),
    "fixed2": (1, 2, ""),
    "fixed3": (1, 3, ""),
    "mb": (1e-6, 1, ""),
}


def format_number(value, kind):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if not math.isfinite(value):
        fail(f"a value to format as {kind} is not finite ({value})")
    if kind == "gbps":
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 0.1:
            return f"{value:.2f}"
        return f"{value:.2g}" if value else "0"
    if kind not in FIXED_FORMATS:
        fail(f"unknown number format '{kind}'")
    scale, digits, suffix = FIXED_FORMATS[kind]
    return f"{value * scale:.{digits}f}{suffix}"


# ---------------------------------------------------------------------------------------------
# Sources


class Sources:
    def __init__(self, manifest):
        self.specs = manifest.get("sources", {})
        self.loaded = {}

    def spec(self, source_id):
        if source_id not in self.specs:
            fail(f"source '{source_id}' is not in the manifest's sources")
        return self.specs[source_id]

    def load(self, source_id):
        if source_id in self.loaded:
            return self.loaded[source_id]
        path = self.spec(source_id).get("csv")
        if not path:
            fail(f"source '{source_id}' names no csv")
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            fail(f"{path} (source '{source_id}') is missing")
        with open(full, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
        if not header:
            fail(f"{path} is empty")
        for number, row in enumerate(rows, 2):
            if None in row or any(v is None for v in row.values()):
                fail(f"{path}:{number}: the row has {len(row) - (None in row)} fields where the "
                     f"header has {len(header)}")
        self.loaded[source_id] = (path, header, rows)
        return self.loaded[source_id]


def number_of(path, row, column):
    text = row.get(column)
    if text is None:
        fail(f"{path} has no column '{column}'")
    try:
        return float(text)
    except ValueError:
        fail(f"{path}: column '{column}' holds '{text}', not a number")


def describe(selection):
    return json.dumps(selection, ensure_ascii=False, sort_keys=True)


def select(sources, selection, default_source, what):
    """The rows of one source that match every column of the selection."""
    selection = dict(selection)
    source_id = selection.pop("source", default_source)
    if source_id is None:
        fail(f"{what}: the selection {describe(selection)} names no source")
    path, header, rows = sources.load(source_id)
    for column in selection:
        if column not in header:
            fail(f"{path} has no column '{column}' ({what}, selection {describe(selection)})")
    wanted = {c: (v if isinstance(v, list) else [v]) for c, v in selection.items()}
    for column, values in wanted.items():
        if not all(isinstance(v, str) for v in values):
            fail(f"{what}: selection values are strings, as in the CSV ({column}: {values})")
    matched = [r for r in rows if all(r[c] in vs for c, vs in wanted.items())]
    if not matched:
        fail(f"{what}: no row of {path} matches {describe(selection)}")
    return path, matched


# ---------------------------------------------------------------------------------------------
# Values


def aggregate(path, rows, column, how, count, what):
    if column not in rows[0]:
        fail(f"{path} has no column '{column}' ({what})")
    if count is not None and len(rows) != count:
        fail(f"{what}: {len(rows)} rows of {path} match where {count} are expected")
    if how == "one":
        if len(rows) != 1:
            fail(f"{what}: {len(rows)} rows of {path} match where one is expected; narrow the "
                 f"selection or give an 'agg'")
        return number_of(path, rows[0], column)
    values = [number_of(path, r, column) for r in rows]
    if how == "total":
        size = [number_of(path, r, "bytes") for r in rows]
        if any(v <= 0 for v in values):
            fail(f"{what}: a rate of 0 in {path} cannot be totalled")
        return sum(size) / sum(b / v for b, v in zip(size, values))
    if how == "mean":
        return sum(values) / len(values)
    if how == "min":
        return min(values)
    if how == "max":
        return max(values)
    if how == "same":
        if len(set(values)) != 1:
            fail(f"{what}: the matched rows of {path} differ in '{column}' ({sorted(set(values))})")
        return values[0]
    fail(f"{what}: unknown agg '{how}'")


class Evaluator:
    def __init__(self, manifest, sources):
        self.manifest = manifest
        self.sources = sources
        self.constants = manifest.get("constants", {})
        self.regions = {r["id"]: r for r in manifest.get("regions", [])}
        self.table_cache = {}
        self.sbs_cache = {}

    # A table row's named selection, with the table's filter under it.
    def rows_for(self, table, row, name, what):
        if name not in row:
            return None
        selection = dict(table.get("filter", {}))
        selection.update(row[name])
        return select(self.sources, selection, table.get("source"), what)

    def value(self, spec, table=None, row=None, what=""):
        if not isinstance(spec, dict):
            fail(f"{what}: a value spec must be an object, not {spec!r}")
        scale = spec.get("scale", 1)
        result = self.raw_value(spec, table, row, what)
        return None if result is None else result * scale

    def raw_value(self, spec, table, row, what):
        if "field" in spec or "efficiency" in spec:
            if "select" in spec:
                found = select(self.sources, spec["select"], spec.get("source"), what)
            elif row is not None:
                found = self.rows_for(table, row, spec.get("row", "match"), what)
            else:
                fail(f"{what}: the value needs a 'select' outside a table row")
            if found is None:
                return None
            path, rows = found
            if "field" in spec:
                return aggregate(path, rows, spec["field"], spec.get("agg", "one"),
                                 spec.get("count"), what)
            column = spec["efficiency"]
            at_n = aggregate(path, rows, column, "total", spec.get("count"), what)
            threads = aggregate(path, rows, "threads", "same", None, what)
            base = self.rows_for(table, row, spec.get("base", "base"), what)
            if base is None:
                return None
            at_one = aggregate(base[0], base[1], column, "total", spec.get("count"), what)
            return at_n / (threads * at_one)
        if "const" in spec:
            table_id = spec["const"]
            if table_id not in self.constants:
                fail(f"{what}: constant table '{table_id}' is not in the manifest")
            if "key" in spec:
                key = spec["key"]
            elif "by" in spec and row is not None:
                found = self.rows_for(table, row, spec.get("row", "match"), what)
                if found is None:
                    return None
                path, rows = found
                key = rows[0].get(spec["by"])
                if key is None:
                    fail(f"{path} has no column '{spec['by']}'")
            else:
                fail(f"{what}: a constant needs 'key' or 'by'")
            values = self.constants[table_id].get("values", {})
            if key not in values or spec.get("item") not in values[key]:
                fail(f"{what}: constant table '{table_id}' has no {key} / {spec.get('item')}")
            return float(values[key][spec["item"]])
        if "div" in spec or "mul" in spec:
            op = "div" if "div" in spec else "mul"
            a, b = (self.value(s, table, row, what) for s in spec[op])
            if a is None or b is None:
                return None
            if op == "div":
                if b == 0:
                    fail(f"{what}: division by zero")
                return a / b
            return a * b
        if "table" in spec:
            return self.table_value(spec, what)
        if "side_by_side" in spec:
            summary = self.side_by_side(spec["side_by_side"], what)
            dataset = spec.get("dataset", "(all)")
            if dataset not in summary["by_dataset"]:
                fail(f"{what}: side-by-side source '{spec['side_by_side']}' has no dataset "
                     f"'{dataset}'")
            entry = summary["by_dataset"][dataset]
            if spec.get("item") not in entry:
                fail(f"{what}: side-by-side item '{spec.get('item')}' is not one of "
                     f"{sorted(entry)}")
            return entry[spec["item"]]
        if "number" in spec:
            return float(spec["number"])
        fail(f"{what}: cannot tell what the value spec {describe(spec)} asks for")

    def table_value(self, spec, what):
        region_id = spec["table"]
        if region_id not in self.regions:
            fail(f"{what}: region '{region_id}' is not in the manifest")
        computed = self.compute_region(self.regions[region_id])
        keys = [c.get("key") for c in computed["columns"]]
        if spec.get("column") not in keys:
            fail(f"{what}: region '{region_id}' has no column with key '{spec.get('column')}'")
        index = keys.index(spec["column"])
        values = []
        for label, cells, key in computed["rows"]:
            if "label" in spec and label != spec["label"]:
                continue
            if "row_key" in spec and key != spec["row_key"]:
                continue
            parts = cells[index]
            chosen = parts if "part" not in spec else [parts[spec["part"]]]
            values.extend(v for v in chosen if isinstance(v, float))
        if not values:
            fail(f"{what}: region '{region_id}', column '{spec['column']}' has no figure there")
        how = spec.get("agg", "one")
        if how == "min":
            return min(values)
        if how == "max":
            return max(values)
        if len(values) != 1:
            fail(f"{what}: {len(values)} figures where one is expected (give 'label', 'part' "
                 f"or an 'agg')")
        return values[0]

    # -----------------------------------------------------------------------------------------
    # side_by_side.sh's CSV: rounds of upstream-st and project-serial, interleaved per dataset.

    def side_by_side(self, source_id, what):
        if source_id in self.sbs_cache:
            return self.sbs_cache[source_id]
        path, header, rows = self.sources.load(source_id)
        for column in ("round", "codec", "file", "bytes", "compress_gbps", "decompress_gbps",
                       "verified", "same"):
            if column not in header:
                fail(f"{path} has no column '{column}' ({what})")
        original, ours = "upstream-st", "project-serial"
        runs = {}  # (file, round) -> {codec: row}
        order = []
        for r in rows:
            if r["verified"] != "yes" or r["same"] not in ("yes", "ref"):
                fail(f"{path}: {r['file']} round {r['round']} is not verified or its stream "
                     f"differs")
            if r["codec"] not in (original, ours):
                fail(f"{path}: codec '{r['codec']}' is neither {original} nor {ours}")
            if r["file"] not in order:
                order.append(r["file"])
            runs.setdefault((r["file"], r["round"]), {})[r["codec"]] = r
        if not order:
            fail(f"{path} has no rows")

        def rate(r, direction):
            value = number_of(path, r, direction + "_gbps")
            if value <= 0:
                fail(f"{path}: {r['file']} round {r['round']}: {direction} at {value} GB/s")
            return value

        by_dataset = {}
        calls = {}  # rounds a dataset ran in -> its datasets: a call of side_by_side.sh
        for name in order:
            pairs = [(rd, codecs) for (f, rd), codecs in runs.items() if f == name]
            pairs = [(rd, c) for rd, c in pairs if original in c and ours in c]
            if not pairs:
                fail(f"{path}: {name} has no round with both {original} and {ours}")
            pairs.sort(key=lambda p: (len(p[0]), p[0]))
            entry = {"bytes": number_of(path, pairs[0][1][ours], "bytes")}
            for direction in ("compress", "decompress"):
                entry["original_" + direction] = statistics.median(
                    rate(c[original], direction) for _, c in pairs)
                entry["ours_" + direction] = statistics.median(
                    rate(c[ours], direction) for _, c in pairs)
                entry["ratio_" + direction] = statistics.median(
                    rate(c[ours], direction) / rate(c[original], direction) for _, c in pairs)
            by_dataset[name] = entry
            calls.setdefault(tuple(rd for rd, _ in pairs), []).append(name)
        # The corpus: per call, each round's total bytes / total time and the median over its
        # rounds; the calls then add up as total bytes / total time.
        total = {"bytes": 0.0}
        seconds = {}
        for call_rounds, names in sorted(calls.items()):
            size = sum(by_dataset[n]["bytes"] for n in names)
            total["bytes"] += size
            for codec, key in ((original, "original"), (ours, "ours")):
                for direction in ("compress", "decompress"):
                    per_round = [size / sum(number_of(path, runs[(n, rd)][codec], "bytes")
                                            / rate(runs[(n, rd)][codec], direction)
                                            for n in names) for rd in call_rounds]
                    k = f"{key}_{direction}"
                    seconds[k] = seconds.get(k, 0.0) + size / statistics.median(per_round)
        for k, s in seconds.items():
            total[k] = total["bytes"] / s
        for direction in ("compress", "decompress"):
            total["ratio_" + direction] = total["ours_" + direction] / total["original_" + direction]
        summary = {"order": order, "by_dataset": dict(by_dataset, **{"(all)": total})}
        self.sbs_cache[source_id] = summary
        return summary

    # -----------------------------------------------------------------------------------------
    # Regions

    def compute_region(self, region):
        region_id = region["id"]
        if region_id in self.table_cache:
            return self.table_cache[region_id]
        kind = region.get("kind", "table")
        if kind == "table":
            computed = self.compute_table(region)
        elif kind == "side_by_side":
            computed = self.compute_side_by_side(region)
        else:
            fail(f"region '{region_id}' of kind '{kind}' has no table")
        self.table_cache[region_id] = computed
        return computed

    def compute_table(self, table):
        region_id = table["id"]
        columns = table.get("columns")
        if not columns:
            fail(f"table '{region_id}' has no columns")
        rows = []
        for row in expand_rows(table.get("rows", []), region_id):
            label = row.get("label")
            if label is None:
                fail(f"table '{region_id}': a row has no label")
            cells = []
            for column in columns:
                what = f"table '{region_id}', row '{label}', column '{column.get('head')}'"
                specs = column.get("cells")
                if not specs:
                    fail(f"table '{region_id}': column '{column.get('head')}' has no cells")
                cells.append([self.value(s, table, row, what) for s in specs])
            rows.append((label, cells, row.get("key")))
        if "sort_by" in table:
            keys = [c.get("key") for c in columns]
            if table["sort_by"] not in keys:
                fail(f"table '{region_id}': sort_by '{table['sort_by']}' is not a column key")
            index = keys.index(table["sort_by"])
            rows.sort(key=lambda lc: (lc[1][index][0] is None, lc[1][index][0] or 0.0, lc[0]))
        return {"columns": columns, "rows": rows}

    def compute_side_by_side(self, region):
        summary = self.side_by_side(region["source"], f"region '{region['id']}'")
        labels = region.get("labels", {})
        columns = [
            {"key": "mb", "head": "MB", "cells": [{}], "format": "mb"},
            {"key": "c", "head": "compress: original / ours GB/s", "cells": [{}, {}],
             "format": "gbps"},
            {"key": "rc", "head": "ours / original", "cells": [{}], "format": "times"},
            {"key": "d", "head": "decompress: original / ours GB/s", "cells": [{}, {}],
             "format": "gbps"},
            {"key": "rd", "head": "ours / original", "cells": [{}], "format": "times"},
        ]
        rows = []
        names = summary["order"] + ["(all)"]
        for name in names:
            e = summary["by_dataset"][name]
            label = labels.get(name, name)
            rows.append((label, [[e["bytes"]], [e["original_compress"], e["ours_compress"]],
                                 [e["ratio_compress"]],
                                 [e["original_decompress"], e["ours_decompress"]],
                                 [e["ratio_decompress"]]], name))
        return {"columns": columns, "rows": rows, "bold_last": True}


def expand_rows(rows, region_id):
    """A row with "each": {NAME: [values]} stands for one row per value, {NAME} replaced."""
    out = []
    for row in rows:
        if "each" not in row:
            out.append(row)
            continue
        each = row["each"]
        if len(each) != 1:
            fail(f"table '{region_id}': 'each' takes one name")
        (name, values), = each.items()
        body = {k: v for k, v in row.items() if k != "each"}
        for value in values:
            out.append(substitute(body, "{" + name + "}", value))
    return out


def substitute(obj, needle, value):
    if isinstance(obj, str):
        return obj.replace(needle, value)
    if isinstance(obj, list):
        return [substitute(x, needle, value) for x in obj]
    if isinstance(obj, dict):
        return {k: substitute(v, needle, value) for k, v in obj.items()}
    return obj


# ---------------------------------------------------------------------------------------------
# Rendering


def source_caption(manifest, region):
    """Source: `CSV`: device, date, build; `command` (runs). A sentence per source."""
    ids = region.get("sources") or [region.get("source")]
    sentences = []
    for source_id in ids:
        spec = manifest["sources"].get(source_id)
        if spec is None:
            fail(f"region '{region['id']}': source '{source_id}' is not in the manifest")
        text = f"`{spec['csv']}`"
        facts = [spec[k] for k in ("device", "date", "build") if spec.get(k)]
        if facts:
            text += ": " + ", ".join(facts)
        if spec.get("command"):
            text += f"; `{spec['command']}`"
        if spec.get("runs"):
            text += f" ({spec['runs']})"
        sentences.append(text + ".")
    return ("Source: " if len(ids) == 1 else "Sources: ") + " ".join(sentences)


def render_table(manifest, evaluator, region):
    computed = evaluator.compute_region(region)
    columns = computed["columns"]
    head = [region.get("label_head", "")] + [c["head"] for c in columns]
    lines = [wrap(source_caption(manifest, region)), ""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "".join("---:|" for _ in columns))
    last = len(computed["rows"]) - 1
    for i, (label, cells, _) in enumerate(computed["rows"]):
        texts = []
        for column, parts in zip(columns, cells):
            specs = column["cells"]
            shown = [format_number(v, s.get("format", column.get("format", "gbps")))
                     for v, s in zip(parts, specs)]
            texts.append(column.get("join", " / ").join(shown))
        if computed.get("bold_last") and i == last:
            label = f"**{label}**"
            texts = [f"**{t}**" for t in texts]
        lines.append("| " + " | ".join([label] + texts) + " |")
    notes = list(region.get("notes", []))
    constants = sorted({s["const"] for c in columns for s in c.get("cells", []) if "const" in s}
                       | set(region.get("constants", [])))
    for constant_id in constants:
        note = manifest.get("constants", {}).get(constant_id, {}).get("note")
        if note:
            notes.append(note)
    for note in notes:
        lines += ["", wrap(note)]
    return "\n".join(lines)


def render_text(evaluator, region):
    template = region.get("template")
    if isinstance(template, list):
        template = "".join(template)
    if not template:
        fail(f"text '{region['id']}' has no template")
    values = region.get("values", {})
    used = set()

    def replace(match):
        name = match.group(1)
        if name not in values:
            fail(f"text '{region['id']}': '{{{name}}}' has no value")
        used.add(name)
        spec = values[name]
        number = evaluator.value(spec, what=f"text '{region['id']}', value '{name}'")
        return format_number(number, spec.get("format", "gbps"))

    text = re.sub(r"\{([A-Za-z0-9_]+)\}", replace, template)
    unused = sorted(set(values) - used)
    if unused:
        fail(f"text '{region['id']}': values never used in the template: {', '.join(unused)}")
    return wrap(text)


def wrap(text):
    """One paragraph at TEXT_WIDTH columns, never broken inside a code span or a figure pair."""
    text = " ".join(text.split())
    glue = "\x00"
    text = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", glue), text)
    text = re.sub(r"(?<=\S) (/|->) (?=\S)", lambda m: glue + m.group(1) + glue, text)
    text = textwrap.fill(text, width=TEXT_WIDTH, break_long_words=False, break_on_hyphens=False)
    return text.replace(glue, " ")


def render_region(manifest, evaluator, region):
    kind = region.get("kind", "table")
    if kind in ("table", "side_by_side"):
        return render_table(manifest, evaluator, region)
    if kind == "text":
        return render_text(evaluator, region)
    fail(f"region '{region['id']}': unknown kind '{kind}'")


# ---------------------------------------------------------------------------------------------
# Documents


def regions_in(path, lines):
    """[(id, begin line index, end line index)] of a document; every marker paired."""
    found = []
    open_id = None
    open_at = None
    for i, line in enumerate(lines):
        text = line.rstrip("\n")
        begin, end = BEGIN.match(text), END.match(text)
        if not begin and not end:
            if ANY_MARKER.search(text):
                fail(f"{path}:{i + 1}: a perf-report marker must be a line of its own: "
                     f"'<!-- perf-report:begin ID -->' or '<!-- perf-report:end ID -->'")
            continue
        if begin:
            if open_id is not None:
                fail(f"{path}:{i + 1}: begin of '{begin.group(1)}' inside '{open_id}' (opened "
                     f"at line {open_at + 1}, no end before it)")
            open_id, open_at = begin.group(1), i
        else:
            if open_id is None:
                fail(f"{path}:{i + 1}: end of '{end.group(1)}' without its begin")
            if end.group(1) != open_id:
                fail(f"{path}:{i + 1}: end of '{end.group(1)}' where '{open_id}' (line "
                     f"{open_at + 1}) is open")
            found.append((open_id, open_at, i))
            open_id = None
    if open_id is not None:
        fail(f"{path}:{open_at + 1}: begin of '{open_id}' without its end")
    return found


def generate(manifest, manifest_path):
    """{document path: (old text, new text)} for every document of the manifest."""
    evaluator = Evaluator(manifest, Sources(manifest))
    by_id = {}
    for region in manifest.get("regions", []):
        if "id" not in region:
            fail(f"{manifest_path}: a region has no id")
        if region["id"] in by_id:
            fail(f"{manifest_path}: region '{region['id']}' is listed twice")
        by_id[region["id"]] = region
    documents = manifest.get("documents")
    if not documents:
        fail(f"{manifest_path}: no documents")
    seen = {}
    results = {}
    for doc in documents:
        full = os.path.join(ROOT, doc)
        if not os.path.isfile(full):
            fail(f"{doc} (a document of the manifest) is missing")
        with open(full, encoding="utf-8") as f:
            old = f.read()
        lines = old.split("\n")
        out = []
        position = 0
        for region_id, begin, end in regions_in(doc, lines):
            if region_id not in by_id:
                fail(f"{doc}:{begin + 1}: region '{region_id}' is not in {manifest_path}")
            if region_id in seen:
                fail(f"{doc}:{begin + 1}: region '{region_id}' is also in {seen[region_id]}")
            seen[region_id] = f"{doc}:{begin + 1}"
            out += lines[position:begin + 1]
            out += render_region(manifest, evaluator, by_id[region_id]).split("\n")
            out.append(lines[end])
            position = end + 1
        out += lines[position:]
        results[doc] = (old, "\n".join(out))
    missing = [r for r in by_id if r not in seen]
    if missing:
        fail(f"regions of {manifest_path} found in no document: {', '.join(missing)}")
    return results


# ---------------------------------------------------------------------------------------------
# Plots


def draw_plots(manifest, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    groups = manifest.get("plots", [])
    if not groups:
        fail("the manifest names no plots")
    # make-plots.sh installs matplotlib where it is missing: its groups go first.
    groups = sorted(groups, key=lambda g: g.get("tool", "make-plots") != "make-plots")
    for group in groups:
        csvs = [os.path.join(ROOT, c) for c in group.get("csvs", [])]
        for c, full in zip(group.get("csvs", []), csvs):
            if not os.path.isfile(full):
                fail(f"{c} (plot group '{group.get('id')}') is missing")
        keep = group.get("keep", [])
        if not keep:
            fail(f"plot group '{group.get('id')}' keeps no figure")
        tool = group.get("tool", "make-plots")
        with tempfile.TemporaryDirectory(prefix="perf-report-") as scratch:
            if tool == "make-plots":
                command = [os.path.join(ROOT, "scripts", "make-plots.sh")] + csvs + ["--out",
                                                                                    scratch]
            elif tool == "plot-cpu-scaling":
                if len(csvs) != 2 or len(keep) != 1:
                    fail(f"plot group '{group.get('id')}': plot-cpu-scaling takes the upstream "
                         f"and the project CSV and makes one figure")
                command = ["/usr/bin/python3", os.path.join(ROOT, "scripts",
                                                            "plot-cpu-scaling.py")] + csvs + [
                    os.path.join(scratch, keep[0])]
            else:
                fail(f"plot group '{group.get('id')}': unknown tool '{tool}'")
            print("perf-report: " + " ".join(os.path.relpath(p, ROOT) if p.startswith(ROOT)
                                             else p for p in command), flush=True)
            if subprocess.run(command, cwd=ROOT).returncode != 0:
                fail(f"plot group '{group.get('id')}': {tool} failed")
            for name in keep:
                made = os.path.join(scratch, name)
                if not os.path.isfile(made):
                    fail(f"plot group '{group.get('id')}': {tool} made no {name}")
                shutil.copyfile(made, os.path.join(out_dir, name))
                print(f"perf-report: {os.path.join(out_dir, name)}")


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="rewrite nothing; exit 1 with a diff if a region is not up to date")
    mode.add_argument("--plots", metavar="DIR",
                      help="also redraw the manifest's figures into DIR")
    parser.add_argument("--manifest", default=DEFAULT_MANIFEST, help=argparse.SUPPRESS)
    args = parser.parse_args()
    manifest_path = os.path.relpath(os.path.abspath(args.manifest), ROOT)
    try:
        if not os.path.isfile(args.manifest):
            fail(f"{manifest_path} is missing")
        with open(args.manifest, encoding="utf-8") as f:
            try:
                manifest = json.load(f)
            except json.JSONDecodeError as e:
                fail(f"{manifest_path}: {e}")
        results = generate(manifest, manifest_path)
        stale = [doc for doc, (old, new) in results.items() if old != new]
        if args.check:
            for doc in stale:
                old, new = results[doc]
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True),
                    fromfile=f"a/{doc}", tofile=f"b/{doc} (generated)"))
            if stale:
                print(f"perf-report: stale: {', '.join(stale)} (not what {manifest_path} "
                      f"generates); run scripts/perf-report.py", file=sys.stderr)
                return 1
            print(f"perf-report: {', '.join(results)} up to date")
            return 0
        for doc in stale:
            with open(os.path.join(ROOT, doc), "w", encoding="utf-8") as f:
                f.write(results[doc][1])
            print(f"perf-report: rewrote {doc}")
        if not stale:
            print(f"perf-report: {', '.join(results)} up to date")
        if args.plots:
            draw_plots(manifest, os.path.abspath(args.plots))
        return 0
    except ReportError as e:
        print(f"perf-report: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
