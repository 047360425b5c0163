"""``python -m aletheia`` runs the CLI."""

from aletheia.cli.main import main

main()
