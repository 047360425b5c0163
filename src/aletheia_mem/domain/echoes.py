"""What an error may repeat of a value a client sent: a name it asked for (an unknown tool or
method, a query parameter, a body field, a path's action) or a header it gave (``Origin``,
``Host``, ``MCP-Protocol-Version``), and what a hub's audit row keeps of a tool's name.

Any secret in it is redacted (``ghp_...`` is ``[REDACTED]``), as in everything stored, since an
error's text lands in client logs, proxies and the hub's audit trail; it is cut to a length,
and ``echoed`` shows its invisible characters as escapes (``escapes.escaped``). Ordinary text
comes back unchanged. Only errors call these: the redaction's cost stays off every answer
that succeeds.
"""

from __future__ import annotations

from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.escapes import escaped

MAX_ECHO = 100  # characters of a client's name an error repeats
# Characters past the cut that are redacted with the text before it: a secret that begins
# before the cut and ends within them is recognised whole (a cut one might not be), while a
# name of megabytes costs no more than this to redact.
_LOOKAHEAD = 300


def shortened(text: str, most: int = MAX_ECHO) -> str:
    """``text`` cut to at most ``most`` characters (and an ellipsis)."""
    return text if len(text) <= most else text[:most] + "..."


def redacted_echo(text: str, most: int = MAX_ECHO) -> str:
    """``text`` as an error may repeat it where the error escapes it in its own way (a JSON
    string, Python's ``repr``): any secret in it redacted, then ``shortened`` to ``most``."""
    return shortened(redact_secrets(text[: most + _LOOKAHEAD]), most)


def echoed(text: str, most: int = MAX_ECHO) -> str:
    """``text`` as an error quotes it: ``redacted_echo``, with what does not print as escapes
    (``escaped``: a bidi override would reorder the line it is read on)."""
    return escaped(redacted_echo(text, most))
