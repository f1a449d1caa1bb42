"""The ``hf-ecg`` command: one entry point, one subcommand per step of the workflow, a module each."""

from __future__ import annotations

import argparse
import contextlib
import re
import shlex
import sys
from collections.abc import Sequence

from .. import __version__
from ..data.corpus import CorpusFormatError
from . import baseline, blocks, evaluate, export, generate, mine, push, train
from . import filter as filter_command
from .common import CLIError, refuse_outputs_over_inputs

__all__ = ["main"]

#: The subcommands, in the order ``--help`` lists them.
COMMANDS = (blocks, train, generate, mine, filter_command, push, evaluate, baseline, export)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hf-ecg",
        description="Entity-controlled synthetic NER data with ECG-QALM: build Q&A blocks, train, generate.",
    )
    parser.add_argument("--version", action="version", version=f"hf-ecg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    for command_parser in sub.choices.values():  # its options name the library's parameters in its errors
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def in_cli_words(message: str, parser: argparse.ArgumentParser | None) -> str:
    """A library's message in the command's own words: ``name=True (--flag)`` as ``--flag``, and a parameter that
    is one of the command's options (``max_shared_run``, ``--max_length``) as its flag (``--max-shared-run``), said
    once (``(--flag; or ...)`` after it becomes ``(or ...)``)."""
    message = re.sub(r"\b\w+=(?:True|False|None|\d+),? [(`](--[\w-]+)[)`]", r"\1", message)
    for action in parser._actions if parser is not None else ():
        flags = [flag for flag in action.option_strings if flag.startswith("--")]
        if "_" not in action.dest or not flags or action.nargs == 0:  # a switch's name is no value's
            continue
        flag = flags[0]
        named = re.sub(rf"(?<![\w/.-])(?:--)?{action.dest}(?![\w/.-])", flag, message)
        if named != message and message.count(flag):
            named = named.replace(f" ({flag})", "").replace(f"({flag}; ", "(")
        message = named
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hf-ecg`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from ..hub.push import HubUploadError
    from ..modeling import ModelNotFoundError

    # A command that prints JSON keeps stdout for it: whatever else is printed meanwhile (the Trainer's
    # metrics line, a library's notice) goes to stderr, so that `hf-ecg evaluate ner ... > ner.json` is JSON.
    args.result_stream = sys.stdout
    args.command_line = shlex.join(["hf-ecg", *argv])  # what resumes an interrupted run
    quiet = contextlib.redirect_stdout(sys.stderr) if getattr(args, "prints_json", False) else contextlib.nullcontext()
    input_errors = (CLIError, CorpusFormatError, FileNotFoundError, FileExistsError, ModelNotFoundError, ValueError)
    try:
        refuse_outputs_over_inputs(args)
        with quiet:
            return args.func(args, extra) if extra else args.func(args)
    except (*input_errors, HubUploadError) as err:
        # Every input error exits 2, argparse's code for a bad command line.
        print(
            f"hf-ecg {args.command}: error: {in_cli_words(str(err), getattr(args, 'command_parser', None))}",
            file=sys.stderr,
        )
        return 2
