#!/usr/bin/env python3
"""compare_rootfs.py [--xattrs] A B: two unpacked rootfs folders compared name for name.

For every path (symlinks not followed): the type, the mode (07777), uid/gid, a regular
file's size and content sha256, a symlink's target, a non-folder's mtime, and which names
share an inode (hardlink groups); with --xattrs also every extended attribute (symlinks' own), but
user.rootlesscontainers (umoci --rootless's record of the owners, which imgtool does not
write: bundle/README.md) and security.selinux (the host's labelling). Prints each difference and the count; exits 1 if any.
"""
import hashlib
import os
import stat
import sys


SKIPPED_XATTRS = {"user.rootlesscontainers", "security.selinux"}


def xattrs(path):
    names = sorted(n for n in os.listxattr(path, follow_symlinks=False) if n not in SKIPPED_XATTRS)
    return {n: os.getxattr(path, n, follow_symlinks=False).hex() for n in names}


def describe(root, with_xattrs=False):
    out, inodes = {}, {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            kind = stat.S_IFMT(st.st_mode)
            d = {"type": kind, "mode": oct(stat.S_IMODE(st.st_mode)), "uid": st.st_uid, "gid": st.st_gid}
            if stat.S_ISREG(kind):
                h = hashlib.sha256()
                with open(full, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                d.update(size=st.st_size, sha256=h.hexdigest())
            if stat.S_ISLNK(kind):
                d["target"] = os.readlink(full)
            if with_xattrs:
                d["xattrs"] = xattrs(full)
            if not stat.S_ISDIR(kind):
                d["mtime"] = int(st.st_mtime)
                inodes.setdefault(st.st_ino, []).append(rel)
            out[rel] = d
    for names in inodes.values():
        for n in names:
            out[n]["links"] = sorted(names)
    return out


def main():
    args = sys.argv[1:]
    with_xattrs = args[:1] == ["--xattrs"]
    if with_xattrs:
        args = args[1:]
    a, b = describe(args[0], with_xattrs), describe(args[1], with_xattrs)
    diffs = 0
    for path in sorted(set(a) | set(b)):
        if a.get(path) != b.get(path):
            diffs += 1
            if diffs <= 20:
                print(f"{path}: {a.get(path)} != {b.get(path)}")
    hardlinked = sum(1 for d in a.values() if len(d.get("links", [])) > 1)
    print(f"{len(a)} vs {len(b)} paths, {hardlinked} hardlinked names, {diffs} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
