"""``python -m sluice ARGS`` (and the ``sluice`` console script): runs the
``sluice`` command bundled in the package."""

import os
import sys


def _cli():
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "bin", "sluice")
    if os.path.exists(bundled):
        return bundled
    try:
        with open(os.path.join(here, "_cli_path.txt")) as f:
            return f.read().strip()
    except OSError:
        return "sluice"


def main():
    """The ``sluice`` console script: replaces this process with the command."""
    cli = _cli()
    os.execvp(cli, [cli] + sys.argv[1:])


if __name__ == "__main__":
    main()
