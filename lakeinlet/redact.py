"""Secrets out of any text lakeinlet prints, logs or raises: URI passwords, secret-named settings
and query/option values, AWS secret keys and the credentials in this process's environment.
Every error (`lakeinlet.errors`) and every log line (`lakeinlet.logs`) goes through `redact`."""

from __future__ import annotations

import os
import re

MASK = "***"
SECRET_WORDS = ("password", "passwd", "secret", "token", "credential")
"""Words that make a setting's name secret: Spark's own redaction words (`access.key` names the
key id, which is not secret) plus Iceberg's REST `credential`."""
_WORDS = "|".join(SECRET_WORDS)
_NAME = re.compile(rf"(?i)(?:{_WORDS})")
_KEY = rf"[A-Za-z0-9_.\-]*(?:{_WORDS})[A-Za-z0-9_.\-]*"
# key=value (query strings, JDBC properties, --spark-conf), 'key': 'value' (a dict's repr, JSON) and
# key:value without a space (a JDBC URL's `;password:…`); "token: expected …" in prose is not a pair.
_PAIR = re.compile(rf"(?i)(?P<key>{_KEY})(?P<sep>\s*=\s*['\"]?|['\"]\s*:\s*['\"]?|:(?=[^\s/]))"
                   r"(?P<value>[^\s&;,'\"]+)")
# scheme://user:password@host (the last @ before the path: a password may hold one unencoded).
_USERINFO = re.compile(r"(?<=:)//(?P<info>[^\s/?#'\"]+)@")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{8,}")
# An AWS secret access key: 40 characters of base64's alphabet, mixed case and digits (`_aws_secret`
# tells a path apart).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))"
                         r"(?=.{0,39}[A-Z])(?=.{0,39}[a-z])(?=.{0,39}[0-9])[A-Za-z0-9/+]{40}")
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
"""Environment variables whose values are masked wherever they appear."""
_MIN_KNOWN = 12  # shorter values (moto's `testing`) are words, not secrets worth garbling text for


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by `***` (user names, hosts and keys stay)."""
    for name in SECRET_ENV:
        value = os.environ.get(name, "")
        if len(value) >= _MIN_KNOWN and value in text:
            text = text.replace(value, MASK)
    text = _USERINFO.sub(_userinfo, text)
    text = _PAIR.sub(lambda m: m["key"] + m["sep"] + MASK, text)
    text = _BEARER.sub(lambda m: m[1] + MASK, text)
    return _AWS_SECRET.sub(_aws_secret, text)


def _aws_secret(match: re.Match[str]) -> str:
    run = match[0]
    return run if "//" in run or run.count("/") > 3 else MASK  # a path, not a key


def _userinfo(match: re.Match[str]) -> str:
    user, colon, _ = match["info"].partition(":")
    return f"//{user}:{MASK}@" if colon else f"//{MASK}@"


def secret_name(name: str) -> bool:
    """Whether a setting named `name` holds a secret (`spark.hadoop.fs.s3a.secret.key`,
    `jdbc.password`, Iceberg's `credential` and `token`)."""
    return bool(_NAME.search(name))


def carries_secret(name: str, value: str) -> bool:
    """Whether the setting `name=value` holds a secret, by its name or in its value (a URI with a
    password, `…?password=…`)."""
    return secret_name(name) or redact(value) != value


def redact_setting(item: str) -> str:
    """A `key=value` item as given (perhaps malformed: `key value`, `key:value`) for an error message:
    the value masked when the key names a secret, else `redact(item)`."""
    key = re.split(r"[=\s:]", item.strip(), maxsplit=1)[0]
    if secret_name(key) and key != item.strip():
        return f"{key}={MASK}"
    return redact(item)
