"""``python -m aletheia_mem`` runs the CLI."""

from aletheia_mem.cli.entry import main

main()
