"""The review app (ipywidgets): `from workbench.ui import ReviewApp; app = ReviewApp.open(); app`.

As a standalone local app, served with Voila on this machine only, behind a token:

    workbench app      (Voila on 127.0.0.1 with a generated token; it prints the full URL)

Each browser tab is its own kernel, so two tabs are two writers: a save based on a stale version is refused
and kept as a conflict copy (see `ReviewApp`).
"""


def __getattr__(name: str):
    # Lazy: importing workbench.ui must not pull in ipywidgets for CLI users.
    if name == "ReviewApp":
        from .app import ReviewApp

        return ReviewApp
    raise AttributeError(name)


__all__ = ["ReviewApp"]
