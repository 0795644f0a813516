"""Small helpers shared by the components: child options and JSON documents from Outputs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pulumi


def child(parent: pulumi.Resource, **extra: Any) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, **extra)


def json_document(build: Callable[..., Mapping[str, Any]], **inputs: pulumi.Input[Any]) -> pulumi.Output[str]:
    """Resolve `inputs`, call the pure builder with them, serialise: policies stay pure functions."""
    return pulumi.Output.all(**inputs).apply(lambda values: json.dumps(build(**values)))
