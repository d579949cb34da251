#!/usr/bin/env bash
# The base of a bare test host (tests/host/run --bare): debootstrap minbase of Debian 12 or 13 with
# systemd and nothing the project needs, and the apt sources of a fresh machine of that release. What a fresh machine
# lacks must come from .ci/install, which the harness runs in each bare host, so this base holds no
# package the project's list could be missing. Made once and kept in $AJH_CACHE (default
# /var/cache/agentic-job-test) like tests/host/base.sh; a stamp records what it was made from.
#
# usage: bash tests/host/bare-base.sh [bookworm|trixie]        (prints the base directory; as root)
set -euo pipefail

release=${1:-bookworm}
case $release in
bookworm | trixie) ;;
*)
        echo "bare-base.sh: unknown release '$release' (bookworm or trixie)" >&2
        exit 2
        ;;
esac
cache=${AJH_CACHE:-/var/cache/agentic-job-test}
mirror=${AJH_MIRROR:-http://deb.debian.org/debian}
packages=(systemd systemd-sysv)
stamp="release=$release packages=${packages[*]} mirror=$mirror script=$(sha256sum "$0" | cut -d' ' -f1)"
base=$cache/bare-$release-$(echo "$stamp" | sha256sum | cut -c1-12)

ready() { [ -f "$base/.ajh-stamp" ] && [ "$(cat "$base/.ajh-stamp")" = "$stamp" ]; }
if ready; then
        echo "$base"
        exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock-bare-$release"
flock 9
ready && echo "$base" && exit 0

tmp=$cache/.new-bare-$release
rm -rf "$tmp"
start=$(date +%s)
echo "bare-base.sh: debootstrap minbase $release with ${packages[*]} into $base (once)" >&2
include=$(
        IFS=,
        echo "${packages[*]}"
)
if ! debootstrap --variant=minbase --include="$include" "$release" "$tmp" "$mirror" \
        >"$cache/debootstrap-bare-$release.log" 2>&1; then
        tail -n 20 "$cache/debootstrap-bare-$release.log" >&2
        echo "bare-base.sh: debootstrap failed; log in $cache/debootstrap-bare-$release.log" >&2
        rm -rf "$tmp"
        exit 1
fi
# A fresh machine's sources: the release, its updates and its security archive.
rm -f "$tmp/etc/apt/sources.list"
cat >"$tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
echo ajhost >"$tmp/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tajhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
rm -f "$tmp/etc/machine-id" && : >"$tmp/etc/machine-id"
apt-get -o Dir="$tmp" clean 2>/dev/null || rm -rf "$tmp/var/cache/apt/archives/"*.deb
rm -rf "$tmp/var/lib/apt/lists/"*

echo "$stamp" >"$tmp/.ajh-stamp"
mv "$tmp" "$base"
for old in "$cache/bare-$release"-*; do
        [ "$old" = "$base" ] || [ ! -d "$old" ] && continue
        grep -qF "lowerdir=$old," /proc/self/mountinfo || rm -rf --one-file-system "$old"
done
echo "bare-base.sh: ready in $(($(date +%s) - start)) s, $(du -sh "$base" | cut -f1)" >&2
echo "$base"
