from enum import StrEnum

class ReleasePermitsForce(StrEnum):
    TRUE = "true"

    def __str__(self) -> str:
        return str(self.value)
