#!/bin/sh
# The fly-tune an array task runs, started FLY_TEST_CHILD_DELAY seconds late,
# so that a test can act on a task while it runs.
sleep "${FLY_TEST_CHILD_DELAY:-2}"
exec "$FLY_TEST_FLY_TUNE" "$@"
