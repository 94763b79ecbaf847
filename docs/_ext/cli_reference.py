"""Sphinx extension: the command-line reference, rendered from the parsers at build time.

The directive ``latentstruct-cli`` imports :func:`latentstruct.cli.build_parser` and writes,
for the top-level parser and then for every subcommand in the order the parser declares
them, a section holding argparse's own ``--help`` text as a literal block.  Nothing is
copied by hand, so the page cannot drift from the command line: a new subcommand or option
appears at the next build.

Usage (MyST)::

    ```{latentstruct-cli}
    ```

argparse wraps help text to the terminal's width (``$COLUMNS``); the directive pins it to
:data:`HELP_WIDTH` columns while it renders, so the page does not depend on the terminal the
build ran in.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

HELP_WIDTH = 90  # columns argparse wraps the help text to


@contextlib.contextmanager
def _columns(width: int):
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _subcommands(parser: argparse.ArgumentParser):
    """(name, one-line help, parser) of each subcommand, in declaration order."""
    for action in parser._actions:  # argparse has no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name) or "", sub


class CliReference(SphinxDirective):
    """Render ``latentstruct --help`` and every ``latentstruct COMMAND --help``."""

    has_content = False

    def _section(self, title: str, summary: str, help_text: str) -> nodes.section:
        section = nodes.section()
        section["ids"].append(nodes.make_id(f"cli-{title}"))
        section["names"].append(nodes.fully_normalize_name(title))
        section += nodes.title(text=title)
        if summary:
            summary = summary.rstrip(".")
            section += nodes.paragraph(text=summary[0].upper() + summary[1:] + ".")
        block = nodes.literal_block(help_text, help_text)
        block["language"] = "text"
        section += block
        self.state.document.note_implicit_target(section, section)
        return section

    def run(self):
        import latentstruct.cli
        from latentstruct.cli import build_parser

        # re-read this page on an incremental build when the parsers' source changes
        self.env.note_dependency(__file__)
        for source in sorted(Path(latentstruct.cli.__file__).parent.glob("*.py")):
            self.env.note_dependency(str(source))
        with _columns(HELP_WIDTH):
            parser = build_parser()
            # the top-level help text starts with the description: no summary line above it
            out = [self._section(parser.prog, "", parser.format_help())]
            for name, summary, sub in _subcommands(parser):
                out.append(self._section(f"{parser.prog} {name}", summary, sub.format_help()))
        return out


def setup(app):
    app.add_directive("latentstruct-cli", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
