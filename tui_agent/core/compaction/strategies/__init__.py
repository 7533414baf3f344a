"""The compaction strategies beside the engine, each behind the one `CompactorProtocol` (`../protocol.py`):
v1 (`legacy.py`: the first landing's outbound-only trimming, and the public `tui_agent.compact` contract), the
seed article's (`seed.py`) and the API's own context management (`server.py`). The engine (v2) is the wing
itself; `../modes.py` names them all."""
