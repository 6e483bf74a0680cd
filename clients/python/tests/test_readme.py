"""The README's examples run as shown (against a live lockd instead of 127.0.0.1:8080), and an
API key is sent when given."""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import Server

from lockd_client import LockdError, Lockd

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_examples_run(lockd: Server, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 5
    code = "\n".join(blocks).replace("http://127.0.0.1:8080", lockd.base)
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "holding export:nightly as" in out
    assert "leading in term" in out and "vacant None None" in out
    assert "session nightly-export holds export:eu token" in out and "stopped" not in out
    assert out.rstrip().endswith("404")  # the generated layer's get_lock after the release


def test_the_api_key_is_sent() -> None:
    key = "lk_python_guard_test_key"
    with Server(api_keys={"default": key}) as lockd:
        with Lockd(lockd.base, api_key=key).lock("keyed", ttl=5) as lease:
            assert lease.fencing_token >= 1
        with pytest.raises(LockdError) as refused:
            with Lockd(lockd.base).lock("keyed", ttl=5):
                pass
        assert refused.value.status == 401
