#!/usr/bin/env bash
# Builds the Baton server wheel from this repository into bundled/, and
# vendors its runtime dependencies there as wheels, so the extension can
# install the server with `pip install --no-index --find-links bundled/`
# (no network) into its private environment.
#
# Dependency wheels are fetched for CPython 3.11-3.13 on this machine's
# platform (pydantic-core is compiled); elsewhere the extension falls back to
# the package index for the dependencies.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
out="$here/bundled"

if [ -n "${BATON_PYTHON:-}" ]; then py="$BATON_PYTHON"
elif [ -x "$repo/.venv/bin/python" ]; then py="$repo/.venv/bin/python"
else py=python3; fi

rm -rf "$out"
mkdir -p "$out"
echo "[bundle-python] building the baton wheel with $py" >&2
"$py" -m pip wheel --quiet --no-deps --wheel-dir "$out" "$repo" >&2
wheel="$(ls "$out"/baton-*.whl)"

platform="$("$py" -c 'import sysconfig; print(sysconfig.get_platform())')"
case "$platform" in
  linux-x86_64) platforms=(manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_28_x86_64) ;;
  linux-aarch64) platforms=(manylinux_2_17_aarch64 manylinux2014_aarch64 manylinux_2_28_aarch64) ;;
  *) platforms=() ;;
esac

for version in ${BATON_BUNDLE_PYTHONS:-3.11 3.12 3.13}; do
  args=(--quiet --only-binary=:all: --dest "$out" --python-version "$version" --implementation cp)
  for p in "${platforms[@]}"; do args+=(--platform "$p"); done
  if [ ${#platforms[@]} -eq 0 ]; then args=(--quiet --dest "$out"); fi
  echo "[bundle-python] dependency wheels for Python $version ($platform)" >&2
  "$py" -m pip download "${args[@]}" "$wheel" >&2
done

# Verify: a clean venv installs the server offline from bundled/ alone.
if [ "${BATON_BUNDLE_VERIFY:-1}" = "1" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$py" -m venv "$tmp/venv"
  "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$out" "$wheel" >&2
  "$tmp/venv/bin/python" -c "import baton, pydantic, pygls" >&2
  echo "[bundle-python] offline install verified" >&2
fi
ls -1 "$out"
