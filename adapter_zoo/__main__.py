import sys

from adapter_zoo.cli import main

sys.exit(main())
