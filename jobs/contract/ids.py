"""The id types the contract's models share: a userId and a documentId, checked by layout's rules."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from jobs.contract import layout

UserId = Annotated[str, AfterValidator(lambda v: layout.validate_id(v, "userId"))]
DocumentId = Annotated[str, AfterValidator(lambda v: layout.validate_id(v, "documentId"))]
