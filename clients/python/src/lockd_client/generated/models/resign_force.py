from enum import StrEnum

class ResignForce(StrEnum):
    TRUE = "true"

    def __str__(self) -> str:
        return str(self.value)
