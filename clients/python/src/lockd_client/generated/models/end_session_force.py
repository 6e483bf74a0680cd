from enum import StrEnum

class EndSessionForce(StrEnum):
    TRUE = "true"

    def __str__(self) -> str:
        return str(self.value)
