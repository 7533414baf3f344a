"""`tui-agent proxy`: a local reverse proxy between an agent and its model API that records each exchange.

routes.py: which API a request speaks and where it goes (never anywhere else); usage.py: the usage, stop
reason and model of an answer (JSON or SSE, gzip or not), read after it was passed on; recorder.py: the
exchanges file (0600, redacted like the journal, no header ever); server.py: the aiohttp forwarder (the
answer streamed as it arrives). The CLI is `tui_agent/faces/proxy.py`; `core/recordings/proxy_log.py` reads a recording
as a log for `watch` and `replay`.
"""
