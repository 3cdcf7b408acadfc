import sys

try:
    from .cli import main

    main()
except KeyboardInterrupt:              # before a command runs (the commands say what was kept)
    print("interrupted", file=sys.stderr)
    sys.exit(130)
