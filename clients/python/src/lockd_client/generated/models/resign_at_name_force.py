from enum import StrEnum

class ResignAtNameForce(StrEnum):
    TRUE = "true"

    def __str__(self) -> str:
        return str(self.value)
