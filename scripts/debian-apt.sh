# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced by install-deps.sh and install-cuda-mpi.sh (not run): apt helpers for Debian source
# packages. Defines sudo_cmd (empty as root), edit_debian_sources, apt_update (one
# `apt-get update` at most), install_missing_packages WHO PACKAGE... (those not installed yet,
# announced as WHO) and download_debian_source NAME FOLDER (`apt-get source
# --download-only` into FOLDER, with deb-src entries added beside the configured deb sources if
# there are none).

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

# Applies a sed expression to every deb822 source file (*.sources) of Debian's archive.
edit_debian_sources() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -q 'debian' "$f" || continue
    "${sudo_cmd[@]}" sed -i -E "$1" "$f"
  done
}

apt_updated=0
apt_update() {
  if [ "$apt_updated" = 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    apt_updated=1
  fi
}

install_missing_packages() {
  local who=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$who: installing Debian packages: ${missing[*]}"
  apt_update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

download_debian_source() {
  local name=$1 folder=$2
  if ! grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "enabling deb-src for the configured Debian sources"
    edit_debian_sources 's/^Types: deb$/Types: deb deb-src/'
    if [ -f /etc/apt/sources.list ] && grep -qE '^deb .*debian' /etc/apt/sources.list; then
      grep -E '^deb .*debian' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
        "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/ndzip-deb-src.list >/dev/null
    fi
    apt_updated=0
  fi
  apt_update
  mkdir -p "$folder"
  (cd "$folder" && apt-get source --download-only -qq "$name" >/dev/null)
}
