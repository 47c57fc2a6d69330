"""Draw the pictures of a mapping written earlier.

``python -m pipeline.draw out/mapping.json`` draws what the run would have drawn
(:mod:`pipeline.targets`): every section of an RDU mapping (routes, nets, congestion), the
tiles of a Streaming Engine mapping or the PEs of a CGRA mapping, next to the mapping unless
``--out`` names another folder. A run draws
pictures only while its time limit lasts (``pipeline.run``); this command has
no limit, so it draws what a short run left out.

Exit codes: 0 drawn, 2 bad input (the file, the hardware, the folder),
3 a failed mapping (nothing to draw).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hardware import InputError, load_hardware, preset_names
from model.mapping import read_mapping
from pipeline.outputs import prepare_out_dir
from pipeline.targets import target_of

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.draw",
        description="Draw the pictures of a mapping.json written by pipeline.run.")
    parser.add_argument("mapping", help="the mapping.json to draw")
    parser.add_argument("--hardware", default=None,
                        help="preset name or hardware file (default: the preset the mapping "
                             "names)")
    parser.add_argument("--out", default=None,
                        help="folder for the pictures (default: the mapping's folder)")
    parser.add_argument("--picture-format", choices=("svg", "png"), default="svg",
                        help="file format of the pictures")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        mapping = read_mapping(args.mapping)
        if args.hardware is None and mapping.hardware not in preset_names():
            raise InputError(args.mapping, "hardware", f'"{mapping.hardware}" is no preset',
                             "pass the hardware file the run used: --hardware FILE")
        spec = load_hardware(args.hardware or mapping.hardware)
        out = prepare_out_dir(args.out or Path(args.mapping).parent)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if mapping.status != "mapped":
        print(f"error: {args.mapping}: the mapping has status {mapping.status!r}: nothing to "
              "draw (fix: map the graph first)", file=sys.stderr)
        return 3
    target = target_of(spec)
    names = target.draw(mapping, spec, target.fabric(spec), out, args.picture_format)
    print(f"drew {len(names)} pictures in {out.resolve()}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
