"""The kafka-audit command line (typer): one module per command under auditor/cli/, each a thin
layer of options over the application in auditor/commands/ (options -> command -> render ->
exit code). A command is one module plus one entry in COMMANDS. Exit codes live in
auditor.exitcodes.

Heavy modules (sqlframe, duckdb, pyspark) are imported inside the commands that need them, so
`kafka-audit rules` and `--help` start fast and never start a JVM.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from auditor import __version__, exitcodes
from auditor.cli import check, collect, fleet, lint, mcp, preflight, rules, wait
from auditor.errors import AuditorError
from auditor.stderr import say

app = typer.Typer(
    name="kafka-audit",
    help="Kafka cluster configuration linter and static auditor.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# The commands, in the order --help lists them.
COMMANDS = (check.check, fleet.fleet, collect.collect, preflight.preflight, wait.wait, lint.lint, mcp.mcp)
for command in COMMANDS:
    app.command()(command)
app.add_typer(rules.app, name="rules")


def _version(value: bool):
    if value:
        typer.echo(f"kafka-audit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
):
    """Collect a snapshot of a Kafka cluster, then lint it: exit 0 clean, 1 findings, 2 usage, 3 incomplete."""


def main() -> None:
    """Console entry point: one-line errors with the right exit code, never a traceback for bad input."""
    from auditor.cli.help import tidy as tidy_help

    try:
        # standalone_mode=False: click returns the exit code instead of exiting itself. tidy:
        # readable --help (metavars, choices, Rich-escaped text: auditor/cli/help.py).
        code = tidy_help(typer.main.get_command(app))(standalone_mode=False)
    except AuditorError as e:  # names a file or a cluster: shown with its control characters made visible
        say(e)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        say("aborted")
        sys.exit(exitcodes.USAGE)
    except KeyboardInterrupt:
        say("interrupted")
        sys.exit(130)
    except Exception as e:  # click usage errors and anything unexpected
        if callable(getattr(e, "show", None)) and hasattr(e, "exit_code"):  # click.ClickException
            e.show()
            sys.exit(exitcodes.USAGE)
        if os.environ.get("KAFKA_AUDIT_DEBUG"):
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        say(f"internal error: {type(e).__name__}: {first} (set KAFKA_AUDIT_DEBUG=1 for details)")
        sys.exit(exitcodes.USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
