"""`workbench sample`: load the bundled sample into the cache."""

from __future__ import annotations

from .common import add_cache, cache_arg


def register(sub) -> None:
    p = sub.add_parser(
        "sample",
        help="load the bundled sample (a made-up repository and verl's facts) into the cache",
        description="Load the bundled sample (package data, workbench/sample/) into the cache: the made-up "
        "repository with diffs and discussion, and the real verl history as facts-only PRs for trends.",
    )
    add_cache(p)
    p.add_argument("--no-verl", action="store_true", help="skip the 2,883 facts-only verl PRs")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..sources.sample import SAMPLE_REPO, load
    from ..store import Store

    store = Store(cache_arg(args))
    try:
        for result in load(store, include_verl=not args.no_verl, progress=True):
            print(result.line())
        print(f"cache: {store.path}")
    finally:
        store.close()
    print(f"next: workbench analyze {SAMPLE_REPO}   or   workbench demo")
    return 0
