# Sourced by the test scripts: `apt_need PKG...` installs the Debian packages of the list
# that are missing, and nothing else.
#
# - A package already installed is left as it is (`--no-upgrade`), and Recommends are not
#   pulled in (`--no-install-recommends`: chromium's would bring systemd, udev and avahi
#   upgrades along).
# - `apt-get update` runs at most once per run of the scripts: the first call exports
#   BATON_APT_UPDATED=1, which the scripts it starts inherit.
# - libkrb5-dev must be the exact version of the installed libkrb5-3: it is asked for at
#   that version when the archive still has it. When the archive only has a newer one,
#   apt has to upgrade libkrb5-3 and its sibling libraries (the same source package) and
#   libcom-err2/libss2 (comerr-dev's exact dependency); the list is printed first.
apt_need() {
  local missing=() pkg version
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "[apt] installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if [ "${BATON_APT_UPDATED:-0}" != "1" ]; then
    apt-get update -qq >&2
    export BATON_APT_UPDATED=1
  fi
  local wanted=()
  for pkg in "${missing[@]}"; do
    if [ "$pkg" = libkrb5-dev ]; then
      version=$(dpkg-query -W -f='${Version}' libkrb5-3 2>/dev/null || true)
      if [ -n "$version" ] && apt-cache madison libkrb5-dev | grep -qF "| $version |"; then
        pkg="libkrb5-dev=$version"
      fi
    fi
    wanted+=("$pkg")
  done
  local upgraded
  upgraded=$(apt-get install -s --no-install-recommends --no-upgrade "${wanted[@]}" 2>/dev/null \
    | awk '/^Inst .*\[/ {print $2}' | tr '\n' ' ')
  if [ -n "$upgraded" ]; then
    echo "[apt] these installed packages must be upgraded for it: $upgraded" >&2
  fi
  apt-get install -y -qq --no-install-recommends --no-upgrade "${wanted[@]}" >&2
}
