"""Input errors that name the file, the place and the fix.

This lives in the lowest package (hardware) so that hardware descriptions,
graphs and mappings all report problems the same way.

Every problem with a user's file (graph.json, a foreign graph, a hardware
description) is raised as an :class:`InputError`; the command line prints its
message and exits with code 2, never with a traceback.
"""

from __future__ import annotations

import re

__all__ = ["InputError"]

#: Control characters (C0, DEL, C1), shown escaped in a message (below).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class InputError(ValueError):
    """A problem in a user's input file.

    Parameters
    ----------
    file : str
        The file the problem is in (as the user named it).
    where : str
        The JSON path or line of the problem, e.g. ``edges[12].dst``; empty for
        the whole file.
    problem : str
        What is wrong, in the user's terms.
    fix : str, optional
        What to do about it.

    Examples
    --------
    >>> str(InputError("graph.json", "edges[12].dst", 'node "N7" does not exist',
    ...                "add the node or correct the id"))
    'graph.json: edges[12].dst: node "N7" does not exist (fix: add the node or correct the id)'
    """

    def __init__(self, file: str, where: str, problem: str, fix: str = ""):
        self.file, self.where, self.problem, self.fix = file, where, problem, fix
        parts = [file] + ([where] if where else []) + [problem]
        message = ": ".join(parts)
        if fix:
            message += f" (fix: {fix})"
        # one line, shown as written: a NUL, newline or ESC from the input is shown as \x00,
        # \x0a, \x1b (a terminal would obey an escape sequence, a newline split the line)
        super().__init__(_CONTROL.sub(lambda c: f"\\x{ord(c.group()):02x}", message))
