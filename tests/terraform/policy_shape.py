"""Policy documents in a canonical shape, so Terraform's rendering and boto3's can be compared."""

from __future__ import annotations

from typing import Any


def _sorted_list(value: Any) -> list[Any]:
    return sorted(value) if isinstance(value, list) else [value]


def _principal(value: Any) -> Any:
    if value == "*" or value == {"AWS": "*"}:
        return "*"
    return {kind: _sorted_list(ids) for kind, ids in value.items()}


def normalise(policy: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Statements by Sid; single values and one-element lists compare equal; order ignored."""
    statements = policy["Statement"]
    out: dict[str, dict[str, Any]] = {}
    for st in statements if isinstance(statements, list) else [statements]:
        out[st["Sid"]] = {
            "Effect": st["Effect"],
            "Principal": _principal(st["Principal"]) if "Principal" in st else None,
            "Action": _sorted_list(st["Action"]),
            "Resource": _sorted_list(st["Resource"]),
            "Condition": {op: {key: _sorted_list(val) for key, val in kv.items()}
                          for op, kv in st.get("Condition", {}).items()},
        }
    return out
