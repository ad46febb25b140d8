"""``python -m dpglm``: the ``dpglm`` command (see :mod:`dpglm.cli`)."""

from dpglm.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
