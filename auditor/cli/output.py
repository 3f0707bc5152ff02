"""What every command does with its result: choose the report format, write the report (in
colour only on a terminal), the --statistics table, baselines, and the exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from auditor import exitcodes
from auditor.errors import UsageError
from auditor.stderr import say

# -o FILE.txt takes any plain-text format (text, or github annotations for a CI log).
PLAIN_TEXT_FORMATS = ("text", "github")


def report_format(command: str, fmt: str | None, output: Path | None, choices) -> str:
    """The report's format: --format, else -o's name ending (auditor.render.FORMATS), else text.
    `-o json` (a file named after a format, meant as -f) and a --format the name contradicts
    are usage errors."""
    from auditor.render import FORMATS, format_of_name

    if output is not None:
        if output.name in FORMATS:
            raise UsageError(
                f"{command}: -o {output} names the output file; for the format give --format {output.name}"
            )
        implied = format_of_name(output.name)
        if (
            fmt is not None
            and implied is not None
            and fmt != implied
            and not (implied == "text" and fmt in PLAIN_TEXT_FORMATS)
        ):
            raise UsageError(f"{command}: --format {fmt} contradicts -o {output} (a {implied} file name)")
        fmt = fmt or implied
    fmt = fmt or "text"
    if fmt not in choices:
        raise UsageError(
            f"{command}: the {fmt} format is not available here (choose one of {', '.join(choices)})"
        )
    return fmt


def colour_wanted(output: Path | None) -> bool:
    """Colour on stdout only: never in a file (-o); NO_COLOR (any non-empty value, no-color.org)
    turns it off, FORCE_COLOR on even in a pipe; otherwise only on a terminal."""
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()


def write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{output}: cannot write ({e.strerror or e})") from None


def write_report(fmt: str, text: str, output: Path | None) -> None:
    """A rendered report; a text one with its severities in colour where colour_wanted says so."""
    if fmt == "text" and colour_wanted(output):
        from auditor.render.text_render import colourise

        text = colourise(text)
    write(text, output)


def statistics(command: str, rows, fmt: str, output: Path | None) -> None:
    """--statistics: the per-rule counts instead of the report (text or json)."""
    from auditor.render import statistics as per_rule_table

    if fmt not in ("text", "json"):
        raise UsageError(f"{command}: --statistics is printed as text or json, not {fmt}")
    write_report(fmt, per_rule_table.render(rows, fmt), output)


def rule_choice(cfg, select: list[str] | None, ignore: list[str] | None, where: str):
    """--select / --ignore applied to the config (auditor.config.with_rule_choice)."""
    from auditor.config import with_rule_choice

    return with_rule_choice(cfg, select, ignore, where)


def read_baseline(path: Path | None, write_to: Path | None):
    """--baseline FILE read (auditor/baseline.py); not when --write-baseline refreshes it."""
    from auditor import baseline

    return baseline.read(path) if path is not None and write_to is None else None


def write_baseline_and_exit(entries, path: Path) -> None:
    """--write-baseline: the entries written, said on stderr, and exit 0."""
    from auditor import baseline

    entries = list(entries)
    write(baseline.document(entries), path)
    typer.echo(baseline.written_line(path, len(entries), len(baseline.unique(entries))), err=True)
    raise typer.Exit(exitcodes.OK)


def tell_baseline(outcome, notes: list[str], *, in_report: bool) -> None:
    """Matched and stale baselined findings: a note of the text report, else a line on stderr.
    A baseline written for another cluster is said on stderr whatever the format."""
    if outcome.foreign:
        say(f"warning: {outcome.foreign}")
    if in_report:
        notes.append(outcome.line())
    else:
        say(f"note: {outcome.line()}")


def exit_with(*, failing: bool, incomplete: bool):
    raise typer.Exit(exitcodes.for_result(failing=failing, incomplete=incomplete))
