"""``python -m aletheia.hooks <event>``: the same as ``aletheia-hook <event>``."""

from aletheia.hooks.main import main

main()
