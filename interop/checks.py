"""What the interop scripts share: a failed check (`Fail`) and the runner that reports each check
as a `PASS` or `FAIL` line and counts them for the closing `N passed, M failed` line."""

from __future__ import annotations

import sys
import time
import traceback


class Fail(Exception):
    """A check found a difference; the message says what."""


def _indent(text: str) -> str:
    return "     " + text.strip().replace("\n", "\n     ")


class Runner:
    """Runs checks one after the other; a failure is reported and the next check runs."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, fn) -> bool:
        """Runs `fn()`; prints `PASS name (time)` or `FAIL name` with what went wrong."""
        t0 = time.monotonic()
        try:
            fn()
        except Fail as e:
            self.failed += 1
            print(f"FAIL {name}\n{_indent(str(e))}")
        except AssertionError:
            self.failed += 1
            print(f"FAIL {name}\n{_indent(traceback.format_exc())}")
        except Exception:  # noqa: BLE001 - every failure is reported, then the next check runs
            self.failed += 1
            print(f"FAIL {name}\n     (error in the check itself)\n{_indent(traceback.format_exc())}")
        else:
            self.passed += 1
            print(f"PASS {name} ({time.monotonic() - t0:.1f}s)")
        sys.stdout.flush()
        return self.failed == 0
