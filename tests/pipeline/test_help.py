"""``--help`` teaches: every default shown once and real, every name the options accept
explained in a line, no internal word left unexplained."""

from __future__ import annotations

import re

from formulations.placement import PLACERS
from formulations.routing import ROUTERS
from hardware import preset_names
from pipeline import help_text
from pipeline.cost_model import COST_MODELS
from pipeline.options import DECISIONS
from pipeline.run import build_parser


def _help() -> str:
    return build_parser().format_help()


def test_every_default_is_real_and_shown_once():
    text = _help()
    assert "(default: None)" not in text and "(default: [])" not in text
    for block in re.split(r"\n  (?=-)", text):          # one option's help each
        assert block.count("(default:") <= 1, block


def test_every_preset_placer_router_cost_model_and_decision_has_a_meaning():
    assert set(preset_names()) <= set(help_text.PRESETS)
    assert set(PLACERS) | {"rl"} <= set(help_text.PLACERS)
    assert set(ROUTERS) <= set(help_text.ROUTERS)
    assert set(COST_MODELS) <= set(help_text.COST_MODELS)
    assert set(DECISIONS) <= set(help_text.DECISIONS)
    text = " ".join(_help().split())
    for name, note in [*help_text.PRESETS.items(), *help_text.PLACERS.items()]:
        assert f"{name} {' '.join(note.split())}" in text


def test_no_internal_jargon():
    text = _help()
    for word in ("SDF", "source 00", "(rl: the PPO"):
        assert word not in text
    assert "decisions (--backend DECISION=NAME):" in text     # "decision" is explained
