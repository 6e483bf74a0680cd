"""The committed HTTP layer is what the pinned generator makes of openapi/openapi.json now: a
changed document without `clients/python/generate` fails here."""

from __future__ import annotations

import filecmp
import json
import os
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1]
COMMITTED = PACKAGE / "src" / "lockd_client" / "generated"


def tree(root: pathlib.Path) -> dict[str, pathlib.Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def generate(into: pathlib.Path, document: pathlib.Path | None = None) -> None:
    env = {**os.environ, "OPENAPI_PYTHON_CLIENT": str(pathlib.Path(sys.executable).parent / "openapi-python-client")}
    if document is not None:
        env["OPENAPI_DOCUMENT"] = str(document)
    subprocess.run([str(PACKAGE / "generate"), str(into)], check=True, env=env)


def drift(fresh: pathlib.Path) -> list[str]:
    """The files that are not the same in the committed copy and in `fresh`."""
    committed, generated = tree(COMMITTED), tree(fresh)
    differ = sorted(set(committed) ^ set(generated))
    differ += [name for name in sorted(set(committed) & set(generated))
               if not filecmp.cmp(committed[name], generated[name], shallow=False)]
    return differ


def test_the_committed_client_is_what_the_document_generates(tmp_path: pathlib.Path) -> None:
    generate(tmp_path / "generated")
    assert drift(tmp_path / "generated") == [], "differ from openapi/openapi.json: run clients/python/generate"


def test_a_changed_document_is_noticed(tmp_path: pathlib.Path) -> None:
    """The check above can fail: a document with one more field in a request body generates
    another model."""
    document = json.loads((PACKAGE.parents[1] / "openapi" / "openapi.json").read_text())
    document["components"]["schemas"]["RenewRequest"]["properties"]["note"] = {"type": "string"}
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(document))
    generate(tmp_path / "generated", changed)
    assert drift(tmp_path / "generated") == ["models/renew_request.py"]
