"""Runs one module of the hvac conformance suite and reports each test as a JSON line.

    python3 runner.py list <module>   # one JSON line per test id, in run order
    python3 runner.py run <module>    # runs them; one JSON line per result

The vitest wrapper (suite.ts) turns every line into a test of its own, so a failing hvac call shows
up by name with the Python traceback. Tests read VAULT_ADDR and VAULT_TOKEN like hvac users do.
"""

import json
import sys
import time
import traceback
import unittest


def iter_tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from iter_tests(item)
        else:
            yield item


class JsonLinesResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.started = {}

    def _emit(self, test, status, detail=None):
        record = {"id": test.id(), "status": status, "ms": round((time.monotonic() - self.started.get(test.id(), time.monotonic())) * 1000)}
        if detail is not None:
            record["detail"] = detail
        print(json.dumps(record), flush=True)

    def startTest(self, test):
        super().startTest(test)
        self.started[test.id()] = time.monotonic()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._emit(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._emit(test, "failed", "".join(traceback.format_exception(*err)))

    def addError(self, test, err):
        super().addError(test, err)
        self._emit(test, "failed", "".join(traceback.format_exception(*err)))

    def addSkip(self, test, reason):
        # A skipped conformance test is a defect: report it as a failure.
        super().addSkip(test, reason)
        self._emit(test, "failed", "skipped: " + reason)


def main():
    command, module = sys.argv[1], sys.argv[2]
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    if command == "list":
        for test in iter_tests(suite):
            print(json.dumps({"id": test.id()}))
        return
    # A failing setUpClass is reported through addError with an _ErrorHolder whose id names the
    # class; the wrapper fails that class's tests with it.
    suite.run(JsonLinesResult())


if __name__ == "__main__":
    main()
