import sys

from citelens.cli.main import main

sys.exit(main())
