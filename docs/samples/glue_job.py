"""The AWS Glue 6.0 job script of docs/deploy/glue.md: lakeinlet-load's arguments from one job parameter."""

import shlex
import sys

from awsglue.utils import getResolvedOptions

from lakeinlet.incremental.job import main

raise SystemExit(main(shlex.split(getResolvedOptions(sys.argv, ["lakeinlet_args"])["lakeinlet_args"])))
