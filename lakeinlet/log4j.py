"""The log4j2 configuration Spark's JVM starts with, written where no other user can plant, swap or
read it: a private folder of this user, a file this process created (O_EXCL|O_NOFOLLOW, 0600)."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

_MADE: dict[str, tuple[Path, os.stat_result]] = {}
"""level → the file this process created for it, and its stat when made."""


def log4j2_file(level: str) -> str:
    """A log4j2 configuration sending the JVM's logging at `level` and above to stderr: the file this
    process made for `level` while it is still as made, else a new one."""
    made = _MADE.get(level)
    if made and _unchanged(*made):
        return str(made[0])
    path = _create(private_folder(), level, _text(level))
    _MADE[level] = (path, os.lstat(path))
    return str(path)


REPEATED = {"executor": ("org.apache.spark.executor.Executor", "Exception in task .*"),
            "tasks": ("org.apache.spark.scheduler.TaskSetManager", "Task .* failed .* times; aborting job")}
"""Per logger, the ERROR line (and stack) a failed task logs that only repeats what the driver gets:
the failed job's exception, which lakeinlet handles (an object set aside, with its cause in the
ledger) or reports itself (its error line). Left out below DEBUG; these loggers' other lines stay."""


def _text(level: str) -> str:
    # PySpark's gateway logger set to the same level: otherwise Spark, taking it for an
    # interactive shell, prints "Setting default log level to WARN".
    return ("status = error\nappender.console.type = Console\nappender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
            f"rootLogger.level = {level.lower()}\nrootLogger.appenderRef.stdout.ref = console\n"
            "logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\n"
            f"logger.gateway.level = {level.lower()}\n") + ("" if level == "DEBUG" else _quiet(level))


def _quiet(level: str) -> str:
    """Loggers whose `REPEATED` line is denied (a RegexFilter matches the whole message)."""
    return "".join(f"logger.{name}.name = {logger}\nlogger.{name}.level = {level.lower()}\n"
                   f"logger.{name}.filter.repeated.type = RegexFilter\n"
                   f"logger.{name}.filter.repeated.regex = {regex}\n"
                   f"logger.{name}.filter.repeated.onMatch = DENY\n"
                   f"logger.{name}.filter.repeated.onMismatch = NEUTRAL\n"
                   for name, (logger, regex) in REPEATED.items())


def _create(folder: Path, level: str, text: str) -> Path:
    """A new file in `folder` holding `text`: a random name, created only if nothing is there
    (O_EXCL) and never through a link (O_NOFOLLOW), readable by this user only; removed at exit."""
    fd, name = tempfile.mkstemp(prefix="log4j2-", suffix=f"-{level.lower()}.properties", dir=folder)
    with os.fdopen(fd, "w") as out:  # mkstemp: O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600
        out.write(text)
    atexit.register(_remove, Path(name))
    return Path(name)


def _unchanged(path: Path, made: os.stat_result) -> bool:
    try:
        now = os.lstat(path)
    except OSError:
        return False
    return (now.st_ino, now.st_dev, now.st_mode, now.st_uid, now.st_size, now.st_mtime_ns) == (
        made.st_ino, made.st_dev, made.st_mode, made.st_uid, made.st_size, made.st_mtime_ns)


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def private_folder() -> Path:
    """This user's folder for lakeinlet's run files: `$XDG_RUNTIME_DIR/lakeinlet`, else
    `<temp dir>/lakeinlet-<uid>`, created 0700. A folder found there that is a link, another user's,
    or open to others is not used: the run gets a fresh private folder (removed at exit) and a warning."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and unsafe(Path(runtime)) is None:
        folder = Path(runtime) / "lakeinlet"
    else:
        folder = Path(tempfile.gettempdir()) / f"lakeinlet-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return _fresh(folder, f"cannot be made ({exc.strerror})")
    why = unsafe(folder)
    return folder if why is None else _fresh(folder, why)


def unsafe(folder: Path) -> str | None:
    """Why `folder` is not a private folder of this user (None when it is one)."""
    try:
        st = os.lstat(folder)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"belongs to uid {st.st_uid}"
    if st.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(st.st_mode):03o})"
    return None


def _fresh(folder: Path, why: str) -> Path:
    made = Path(tempfile.mkdtemp(prefix="lakeinlet-"))  # 0700, a random name, ours
    atexit.register(shutil.rmtree, made, True)
    log.warning("%s %s: this run keeps its files in %s instead", folder, why, made)
    return made
