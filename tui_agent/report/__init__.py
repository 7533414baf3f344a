"""`tui-agent report`: every recorded session on this machine (or a team's store) replayed and priced, in the
terminal, as one HTML page and as a table. The per-session figures are the engine's
(`core/recordings/session_figures.py`); this wing finds the logs, keeps their figures by content hash, runs
them on every core or on a Ray cluster, and draws them."""
