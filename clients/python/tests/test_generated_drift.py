"""The committed HTTP layer is what the pinned generator makes of openapi/openapi.json now: a
changed document without `clients/python/generate` fails here."""

from __future__ import annotations

import filecmp
import os
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1]
COMMITTED = PACKAGE / "src" / "lockd_client" / "_generated"


def tree(root: pathlib.Path) -> dict[str, pathlib.Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_committed_client_is_what_the_document_generates(tmp_path: pathlib.Path) -> None:
    generator = pathlib.Path(sys.executable).parent / "openapi-python-client"
    env = {**os.environ, "OPENAPI_PYTHON_CLIENT": str(generator)}
    fresh = tmp_path / "_generated"
    subprocess.run([str(PACKAGE / "generate"), str(fresh)], check=True, env=env)
    committed, generated = tree(COMMITTED), tree(fresh)
    assert sorted(committed) == sorted(generated), "files differ: run clients/python/generate"
    changed = [name for name in committed
               if not filecmp.cmp(committed[name], generated[name], shallow=False)]
    assert changed == [], f"{changed} differ from openapi/openapi.json: run clients/python/generate"
