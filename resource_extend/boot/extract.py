"""The ``__main__`` of a build with compiled extensions (``--grpc``: grpcio), which must be files to load.

build.py copies this file into the archive as ``__main__.py`` and writes the build's constants below.
Written for any Python 3, like start.py: 3.6 to 3.8 get the plugin's one failure line.

The compiled extensions are for one interpreter and platform (``BUILT_FOR``); any other fails in one line
that names both, before anything is unpacked.

The archive is unpacked once per build id under $SHIV_ROOT, ~/.shiv or $TMPDIR/resource-extend-<uid>, and
every call first proves that no other user can have written what it imports: the root, the build's
directory and its site-packages are real directories (opened with O_NOFOLLOW) owned by the caller with no
group or other write bit, and every directory above the root belongs to root or the caller and is not
writable by others unless sticky (/tmp). What lies below was written by the caller alone: a new build is
unpacked with umask 077 into a private temporary directory (0700) that is then renamed into place
(simultaneous first calls: one rename wins, the others use its result). Anything else refuses the call with
one line, exit 128. A fresh unpack removes all but this build and the newest one before it, and never a
build a running call uses: each call holds a shared lock (flock) on its build's directory until it exits,
and a build is removed only under an exclusive lock taken without waiting, after it is renamed out of the
way; a call whose build was removed while it waited for its lock unpacks the build again.
"""

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

BUILD_ID = "unbuilt"  # build.py writes the build's constants here
PROG = "resource-plugin"
ENTRY = ("", "main")  # build.py writes the entry module here
BUILT_FOR = ("cpython-311", "linux", "x86_64")  # cache tag, sys.platform, machine
KEEP_BEFORE = 1  # extracted builds kept besides this one
STALE_TEMP = 3600.0  # seconds after which a crashed extraction's temporary directory is removed
OLDEST = (3, 9)


class Refused(Exception):
    pass


def verb_of(args: "list[str]") -> str:
    """The verb as the plugin's failure lines name it: the first argument that is not an option."""
    i = 0
    while i < len(args):
        if args[i] == "--config":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return " " + args[i]
    return ""


def fail(cause: str) -> "NoReturn":
    sys.stderr.write("%s%s: %s\n" % (PROG, verb_of(sys.argv[1:]), cause))
    sys.stderr.flush()
    os._exit(128)


def running_on() -> "tuple[str, str, str]":
    return (str(getattr(sys.implementation, "cache_tag", None)), sys.platform, os.uname().machine)


def mismatch(here: "tuple[str, str, str]", version: "tuple[int, ...]") -> "str | None":
    """Why this interpreter cannot run the build, or None: too old, or not the one its extensions are for."""
    if tuple(version[:2]) < OLDEST:
        return "python3 here is %d.%d; the plugin needs Python %d.%d or newer (see docs/python.md)" % (
            version[0],
            version[1],
            OLDEST[0],
            OLDEST[1],
        )
    if here != BUILT_FOR:
        return (
            "this --grpc build carries compiled extensions for %s on %s/%s, and python3 here is %s on %s/%s:"
            " run it with a python3 of that version, or rebuild it with a venv of this one (docs/python.md);"
            " the default build runs on every python3 from 3.9" % (BUILT_FOR + here)
        )
    return None


def check_ancestors(path: str) -> None:
    """Every directory above the root: owned by root or the caller, writable by nobody else unless sticky."""
    uid = os.getuid()
    current = "/"
    for part in [""] + [p for p in path.split("/") if p]:
        current = os.path.join(current, part)
        st = os.lstat(current)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise Refused("%s is not a directory" % current)
        if st.st_uid not in (0, uid):
            raise Refused("%s belongs to uid %d" % (current, st.st_uid))
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            raise Refused("%s is writable by other users" % current)


def open_own_dir(name: str, dir_fd: "int | None" = None, create: bool = False) -> int:
    """A directory of the caller's alone, as a descriptor; O_NOFOLLOW: a planted symlink is refused."""
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        raise Refused("cannot open %s as a directory of its own: %s" % (name, exc.strerror)) from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid():
        os.close(fd)
        raise Refused("%s belongs to uid %d, not to the caller (uid %d)" % (name, st.st_uid, os.getuid()))
    if st.st_mode & 0o022:
        os.close(fd)
        raise Refused("%s is writable by group or others (mode %o)" % (name, stat.S_IMODE(st.st_mode)))
    return fd


def root() -> str:
    """Where builds unpack; symlinks above it are resolved once here, and only the resolved path is used."""
    chosen = os.environ.get("SHIV_ROOT")
    home = os.environ.get("HOME")
    if chosen:
        parent, base = os.path.split(os.path.abspath(chosen).rstrip("/"))
    elif home and os.path.isabs(home) and os.path.isdir(home) and os.access(home, os.W_OK | os.X_OK):
        parent, base = home, ".shiv"
    else:
        parent, base = os.environ.get("TMPDIR") or "/tmp", "resource-extend-%d" % os.getuid()
    return os.path.join(os.path.realpath(parent), base)


def extract(archive: str, root_path: str, root_fd: int, name: str) -> bool:
    """Unpack site-packages privately and rename it into place; False when another call won the rename."""
    import tempfile
    import zipfile

    old_umask = os.umask(0o077)
    try:
        temp = tempfile.mkdtemp(prefix="." + name + ".", dir=root_path)
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                if member.filename.startswith("site-packages/"):
                    zipped.extract(member, temp)
        try:
            os.rename(os.path.basename(temp), name, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        except OSError:  # another call unpacked the same build first: use its copy
            import shutil

            shutil.rmtree(temp, ignore_errors=True)
            return False
    finally:
        os.umask(old_umask)
    return True


def hold(build_fd: int, name: str, root_fd: int) -> bool:
    """Hold a shared lock on the build's directory for as long as this process runs (the descriptor stays
    open): prune removes no build a running call holds. False when the directory was moved away while this
    call waited for the lock (prune held it): ``name`` is no longer it, and the build is to be unpacked again."""
    import fcntl

    fcntl.flock(build_fd, fcntl.LOCK_SH)
    held = os.fstat(build_fd)
    try:
        named = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def remove_unused(root_path: str, root_fd: int, old: str) -> None:
    """Remove the build directory ``old`` unless a running call holds it (``hold``): under an exclusive lock
    taken without waiting, renamed out of the way first, so that no call finds it half removed."""
    import fcntl
    import shutil

    try:
        fd = os.open(old, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a running call uses it: the next fresh unpack tries again
            return
        # A temporary's name (a dot and the executable's): if the removal is cut short, a later prune
        # takes it for a killed extraction's leftover.
        doomed = ".%s.removing.%d" % (old, os.getpid())
        try:
            os.rename(old, doomed, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        except OSError:
            return
        shutil.rmtree(os.path.join(root_path, doomed), ignore_errors=True)  # fd-based: follows no symlink inside
    finally:
        os.close(fd)  # the lock goes with it: a call that waited for it finds the directory gone


def prune(root_path: str, root_fd: int, name: str) -> None:
    """Remove only entries that are ours by name and by owner: older builds of this executable that no
    running call uses and temporary directories that a killed extraction left behind."""
    import shutil
    import time

    prefix = PROG + "_"
    builds = []
    leftovers = []
    now = time.time()
    for entry in os.scandir(root_fd):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.name == name or st.st_uid != os.getuid():
            continue
        build_id = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
        if len(build_id) == 64 and all(c in "0123456789abcdef" for c in build_id) and stat.S_ISDIR(st.st_mode):
            builds.append((st.st_mtime, entry.name))
        elif entry.name.startswith("." + prefix) and now - st.st_mtime > STALE_TEMP:
            leftovers.append(entry.name)
    builds.sort(reverse=True)
    for old in [b[1] for b in builds[KEEP_BEFORE:]]:
        remove_unused(root_path, root_fd, old)
    for old in leftovers:
        path = os.path.join(root_path, old)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)  # fd-based on Linux: never follows a symlink inside
        else:
            try:
                os.unlink(old, dir_fd=root_fd)
            except OSError:
                pass


def site(archive: str) -> str:
    """The checked site-packages of this build, unpacked first if it is not there yet."""
    name = "%s_%s" % (PROG, BUILD_ID)
    root_path = root()
    check_ancestors(os.path.dirname(root_path))
    root_fd = open_own_dir(root_path, create=True)
    try:
        fresh = False
        for _ in range(3):  # a build removed under the call each time: an unpack a try, at most
            try:
                build_fd = open_own_dir(name, dir_fd=root_fd)
            except Refused:
                if os.path.lexists(os.path.join(root_path, name)):
                    raise
                fresh = extract(archive, root_path, root_fd, name) or fresh
                build_fd = open_own_dir(name, dir_fd=root_fd)
            if hold(build_fd, name, root_fd):  # kept open, and locked, until the process exits
                break
            os.close(build_fd)
        else:
            raise Refused("%s was removed under this call three times" % name)
        os.close(open_own_dir("site-packages", dir_fd=build_fd))
        if fresh:
            prune(root_path, root_fd, name)
    finally:
        os.close(root_fd)
    return os.path.join(root_path, name, "site-packages")


def main() -> None:
    why = mismatch(running_on(), tuple(sys.version_info[:2]))
    if why is not None:
        fail(why)
    archive = os.path.dirname(os.path.abspath(__file__))
    try:
        path = site(archive)
    except Refused as exc:
        fail("refusing to load the unpacked build: %s" % exc)
    except OSError as exc:
        fail("cannot unpack the build (set SHIV_ROOT to a directory of your own): %s" % exc)
    sys.path.insert(1, path)
    module_name, function = ENTRY
    __import__(module_name)
    getattr(sys.modules[module_name], function)()


if __name__ == "__main__":
    main()
