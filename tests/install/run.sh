#!/usr/bin/env bash
# run.sh MESON CC BUILD_DIR: install the build under a DESTDIR and use it as a user would.
#
#   1. meson install --destdir (a temporary directory outside the source tree);
#   2. build consumer.c with only `pkg-config --cflags --libs convcat`, run it: it opens the
#      installed catalog with no path given (CONVCAT_CATALOG unset) and queries a problem;
#   3. the same program as a CMake project with only find_package(convcat);
#   4. the installed `convcat --version` names the installed catalog, not the build tree's;
#      the installed `convcat-gen list --spec ci` runs from the prefix;
#   5. LICENSE, the pkg-config `catalog` variable and the CMake version check.
# Exit 77 (skip) without pkg-config or cmake (scripts/install-deps.sh installs both).
set -euo pipefail
for tool in pkg-config cmake; do
    if ! command -v $tool >/dev/null; then
        echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
        exit 77
    fi
done
meson=$1 cc=$2 build=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/convcat-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# meson test points LD_LIBRARY_PATH at the build tree's library: a user's program must not see it.
unset CONVCAT_CATALOG CONVCAT_LOG PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
dest=$work/dest

echo "== meson install --destdir $dest"
"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet
pc=$(find "$dest" -name convcat.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no convcat.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$(pkg-config --variable=prefix convcat)
root=$dest$prefix
catalog=$dest$(pkg-config --variable=catalog convcat)
libdir=$dest$(pkg-config --variable=libdir convcat)
echo "prefix $prefix (under $dest), catalog $catalog"
[ -f "$catalog" ] || { echo "FAIL: pkg-config's catalog variable names $catalog, not installed"; exit 1; }
[ -f "$root/share/doc/convcat/LICENSE" ] || { echo "FAIL: no LICENSE installed"; exit 1; }
grep -q "BSD 3-Clause" "$root/share/doc/convcat/LICENSE"
[ -L "$libdir/libconvcat.so.2" ] || { echo "FAIL: no libconvcat.so.2 in $libdir"; exit 1; }

echo "== pkg-config"
mkdir "$work/pc"
cp "$here/consumer.c" "$work/pc/"
# PKG_CONFIG_SYSROOT_DIR puts the DESTDIR before the .pc file's -I and -L paths.
flags=$(PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs convcat)
echo "pkg-config --cflags --libs convcat: $flags"
(cd "$work/pc" && $cc consumer.c $flags -o consumer)
LD_LIBRARY_PATH=$libdir "$work/pc/consumer" "$catalog"
soname=$(LD_LIBRARY_PATH=$libdir ldd "$work/pc/consumer" | awk '/libconvcat/ {print $1}')
echo "links $soname"
[ "$soname" = "libconvcat.so.2" ] || { echo "FAIL: the program needs $soname, not libconvcat.so.2"; exit 1; }

echo "== CMake find_package(convcat)"
mkdir "$work/cm"
cp "$here/consumer.c" "$here/CMakeLists.txt" "$work/cm/"
CC=$cc cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" \
    || { cat "$work/cmake.log"; exit 1; }
grep "convcat " "$work/cmake.log"
cmake --build "$work/cm/build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cm/build/consumer" "$catalog"   # the imported target's directory is in the build RPATH
# A version the package does not meet is refused.
sed 's/find_package(convcat 0.2 REQUIRED)/find_package(convcat 9.0 REQUIRED)/' "$here/CMakeLists.txt" >"$work/cm/CMakeLists.txt"
if cmake -S "$work/cm" -B "$work/cm/build9" -DCMAKE_PREFIX_PATH="$root" >"$work/cmake9.log" 2>&1; then
    echo "FAIL: find_package(convcat 9.0) accepted convcat $(pkg-config --modversion convcat)"; exit 1
fi
grep -q "compatible with requested version" "$work/cmake9.log" || { cat "$work/cmake9.log"; exit 1; }
echo "find_package(convcat 9.0): refused, as it should be"

echo "== the installed commands"
out=$("$root/bin/convcat" --version)
echo "$out"
echo "$out" | grep -qF "$(realpath "$catalog")" || { echo "FAIL: the installed convcat did not take the installed catalog"; exit 1; }
if echo "$out" | grep -qF "$build"; then
    echo "FAIL: the installed convcat took the build tree's catalog"; exit 1
fi
"$root/bin/convcat" query --n 1 --json >/dev/null || [ $? -eq 1 ]
if python3 -c 'import jinja2' 2>/dev/null; then
    (cd "$work" && "$root/bin/convcat-gen" list --spec ci | tail -1)
    key=$("$root/bin/convcat" list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["kernels"][0]["key"])')
    (cd "$work" && "$root/bin/convcat-gen" explain "$key" >"$work/explain.txt")
    head -1 "$work/explain.txt"
else
    echo "(python3 has no Jinja2 here: convcat-gen not run)"
fi
echo "install test: ok"
