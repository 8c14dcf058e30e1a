#!/usr/bin/env bash
# The one rule for a commit message, shared by the commit-msg hook and CI: a subject line of at
# most 72 characters, then (when there is more) a blank line before the body that says why.
# Usage: scripts/commit_subject.sh FILE   (a commit message; git's comment lines are ignored)
# Exits 1 naming what is wrong.
set -euo pipefail
message=$(grep -v '^#' "$1" || true)
subject=$(printf '%s\n' "$message" | sed -n 1p)
second=$(printf '%s\n' "$message" | sed -n 2p)
if [[ -z ${subject//[[:space:]]/} ]]; then
  echo "commit message: the subject line is empty" >&2
  exit 1
fi
if ((${#subject} > 72)); then
  echo "commit message: the subject is ${#subject} characters, at most 72: \"$subject\"" >&2
  echo "  say what changed in the subject; put the why in the body, after a blank line" >&2
  exit 1
fi
if [[ -n $second ]]; then
  echo "commit message: the second line must be blank (subject, blank line, body)" >&2
  exit 1
fi
