#!/usr/bin/env bash
# compare.sh OLD_BINARY NEW_BINARY
#
# Shows that a change keeps r3fuzz's behaviour byte for byte: runs the battery (run-battery.sh: 361
# commands over every profile, corpus entry and command, error cases included) with each binary and
# prints `diff -r` of the two outputs (empty = identical), then how many files were compared. Build
# the old binary from the commit before the change (a worktree: git worktree add ../old HEAD~1).
# Exit status: 0 identical, 1 different, 2 usage error or a battery that did not complete.
#
# Environment: CMP_ROOT (default build/behaviour in the repository; the outputs go to old/ and new/
# there); R3_REPO and CMD_TIMEOUT are passed on to run-battery.sh.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY" >&2
  exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=${R3_REPO:-$(cd "$HERE/../.." && pwd)}
CMP=${CMP_ROOT:-$REPO/build/behaviour}
OLD=$CMP/old
NEW=$CMP/new

battery() { CMP_ROOT=$CMP "$HERE/run-battery.sh" "$1" "$2" || { echo "compare: the battery did not complete" >&2; exit 2; }; }
battery "$1" "$OLD"
battery "$2" "$NEW"

echo "=== diff -r $OLD $NEW"
diff -r "$OLD" "$NEW"
rc=$?
echo "=== end of diff"
nfiles=$( { (cd "$OLD" && find . -type f); (cd "$NEW" && find . -type f); } | LC_ALL=C sort -u | wc -l)
ndiff=$(diff -rq "$OLD" "$NEW" | wc -l)
echo "compared $nfiles files (the command outputs, the battery's marker and summary); $ndiff differ or exist on one side only"
if [ "$rc" -eq 0 ]; then echo "IDENTICAL"; exit 0; fi
echo "DIFFERENT"
exit 1
