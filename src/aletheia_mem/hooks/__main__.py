"""``python -m aletheia_mem.hooks <event>``: the same as ``aletheia-hook <event>``."""

from aletheia_mem.hooks.main import main

main()
