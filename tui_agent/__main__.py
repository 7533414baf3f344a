"""`python -m tui_agent` is the same as the `tui-agent` console script."""

from tui_agent.faces.cli import main

raise SystemExit(main())
