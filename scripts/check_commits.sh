#!/usr/bin/env bash
# Checks the message of every commit in a range with scripts/commit_subject.sh, as the commit-msg
# hook does at commit time; CI runs it over the commits it is given.
# Usage: scripts/check_commits.sh [RANGE]
#   RANGE defaults to $(cat .ci/commits-checked-since)..HEAD: every commit made since the rule
#   was kept (older subjects were long; history is not rewritten). In a clone without that
#   commit (shallow), HEAD alone is checked, and said.
# The repository is the one of the current directory.
set -euo pipefail
rule=$(dirname "$0")/commit_subject.sh
if (($# > 0)); then
  range=$1
else
  since=$(cat "$(git rev-parse --show-toplevel)/.ci/commits-checked-since")
  if git cat-file -e "$since^{commit}" 2>/dev/null; then
    range=$since..HEAD
  else
    echo "check_commits: $since is not in this clone; checking HEAD alone" >&2
    range=HEAD~1..HEAD
    git cat-file -e "HEAD~1^{commit}" 2>/dev/null || range=HEAD
  fi
fi
bad=0 count=0
message=$(mktemp)
trap 'rm -f "$message"' EXIT
for commit in $(git rev-list "$range"); do
  count=$((count + 1))
  git log -1 --format=%B "$commit" >"$message"
  if ! "$rule" "$message" 2>"$message.err"; then
    echo "commit $(git rev-parse --short "$commit"): $(cat "$message.err")" >&2
    bad=$((bad + 1))
  fi
  rm -f "$message.err"
done
echo "check_commits: $count commits in $range, $bad with a bad message"
((bad == 0))
