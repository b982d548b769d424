import sys

from .main import main

if __name__ == "__main__":  # not when a spawned helper process imports it (analysis/stored.py)
    sys.exit(main())
