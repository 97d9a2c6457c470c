#!/usr/bin/env bash
# Every table and plot in results/: `bash results.sh PART` runs a part's steps (tools/steps.py lists each command,
# its JSON and its cost), `bash results.sh --list` shows which are done, `bash results.sh PART --dry_run` prints them.
exec python -m tools.results "$@"
