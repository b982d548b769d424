"""The loopback test servers' HTTP server: threaded, and quiet when a client goes away."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that closed its kept-alive connection (a finished sync, a cancelled stream) resets it
        # while the handler waits for the next request: nothing went wrong, so print no traceback.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)
