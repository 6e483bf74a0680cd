from enum import StrEnum

class ReleaseLockForce(StrEnum):
    TRUE = "true"

    def __str__(self) -> str:
        return str(self.value)
