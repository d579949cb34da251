#!/usr/bin/env bash
# The base root filesystem of a test host: debootstrap of one Debian release with systemd, D-Bus, polkit,
# sudo, nftables, the network tools and the project's build dependencies. Made once per release and kept in
# $AJH_CACHE (default /var/cache/agentic-job-test); a stamp records what it was made from, so a change to
# the package list below makes it again. Test hosts never write to it: each boots from an overlay.
#
# usage: bash tests/host/base.sh RELEASE        (prints the base directory; as root)
set -euo pipefail

release=${1:?usage: base.sh trixie|bookworm}
case $release in
trixie | bookworm) ;;
*)
        echo "base.sh: unknown release '$release' (trixie or bookworm)" >&2
        exit 2
        ;;
esac
cache=${AJH_CACHE:-/var/cache/agentic-job-test}
mirror=${AJH_MIRROR:-http://deb.debian.org/debian}
base=$cache/base-$release

packages=(
        systemd systemd-sysv dbus dbus-user-session libpam-systemd polkitd
        sudo nftables iproute2 procps util-linux passwd login uidmap acl socat bubblewrap
        ca-certificates curl openssl git squid-openssl
        build-essential meson ninja-build pkg-config
        libsystemd-dev libseccomp-dev libcap-dev libjansson-dev libgit2-dev libmicrohttpd-dev libcurl4-openssl-dev check
        bash-completion python3-yaml debhelper dpkg-dev lintian
        perl-openssl-defaults cron at passt podman netavark slirp4netns busybox-static
        apparmor
)
stamp="release=$release packages=${packages[*]} script=$(sha256sum "$0" | cut -d' ' -f1)"
# One directory per stamp: a base that hosts still run on is never changed or removed under them.
base=$base-$(echo "$stamp" | sha256sum | cut -c1-12)

if [ -f "$base/.ajh-stamp" ] && [ "$(cat "$base/.ajh-stamp")" = "$stamp" ]; then
        echo "$base"
        exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock-$release"
flock 9
# Another run may have made it while this one waited.
if [ -f "$base/.ajh-stamp" ] && [ "$(cat "$base/.ajh-stamp")" = "$stamp" ]; then
        echo "$base"
        exit 0
fi

tmp=$cache/.new-$release
rm -rf "$tmp"
start=$(date +%s)
echo "base.sh: debootstrap $release into $base (once; about 2 minutes)" >&2
include=$(
        IFS=,
        echo "${packages[*]}"
)
if ! debootstrap --variant=minbase --include="$include" "$release" "$tmp" "$mirror" >"$cache/debootstrap-$release.log" 2>&1; then
        tail -n 20 "$cache/debootstrap-$release.log" >&2
        echo "base.sh: debootstrap $release failed; log in $cache/debootstrap-$release.log" >&2
        rm -rf "$tmp"
        exit 1
fi

# What every test host shares: a name, no root password prompt on the console, no periodic jobs that
# would start apt in the middle of a test, and a fixed locale-free environment.
echo ajhost >"$tmp/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tajhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
# squid is the egress proxy's program, started by the test that needs it, never by the package's unit.
for unit in squid.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer \
        systemd-networkd-wait-online.service systemd-timesyncd.service; do
        ln -sf /dev/null "$tmp/etc/systemd/system/$unit"
done
rm -f "$tmp/etc/machine-id" && : >"$tmp/etc/machine-id"
apt-get -o Dir="$tmp" clean 2>/dev/null || rm -rf "$tmp/var/cache/apt/archives/"*.deb

echo "$stamp" >"$tmp/.ajh-stamp"
mv "$tmp" "$base"
# Older bases of this release that no overlay uses any more.
for old in "$cache/base-$release"-*; do
        [ "$old" = "$base" ] || [ ! -d "$old" ] && continue
        grep -qF "lowerdir=$old," /proc/self/mountinfo || rm -rf --one-file-system "$old"
done
echo "base.sh: $release ready in $(($(date +%s) - start)) s, $(du -sh "$base" | cut -f1)" >&2
echo "$base"
