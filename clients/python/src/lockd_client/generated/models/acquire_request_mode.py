from enum import StrEnum

class AcquireRequestMode(StrEnum):
    EXCLUSIVE = "exclusive"
    SHARED = "shared"

    def __str__(self) -> str:
        return str(self.value)
