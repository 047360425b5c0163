"""``python -m aletheia_mem`` runs the CLI."""

from aletheia_mem.cli.main import main

main()
