"""Settings chosen by a tag field (`trainer`, `format`): validate the tag, then the model it names.

Unlike a pydantic discriminated union, errors name the field without the tag (`stages.sft.steps`, not
`stages.sft.sft.steps`), and an unknown tag lists the known ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, create_model

Settings = TypeVar("Settings", bound=BaseModel)


def parse_tagged(data: Mapping[str, Any], *, tag: str, members: Mapping[str, type[Settings]]) -> Settings:
    """Validate `data[tag]` against the keys of `members`, then `data` with the model it picks.

    Raises pydantic's `ValidationError` (field `tag` for a missing or unknown tag).
    """
    choice = create_model(
        f"{tag.title()}Choice",
        __config__=ConfigDict(extra="ignore"),
        **{tag: (Literal[tuple(members)], ...)},  # type: ignore[call-overload]
    )
    picked = getattr(choice.model_validate(dict(data)), tag)
    return members[picked].model_validate(dict(data))
