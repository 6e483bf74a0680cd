from enum import StrEnum

class ReleaseOutcome(StrEnum):
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    RELEASED = "released"

    def __str__(self) -> str:
        return str(self.value)
