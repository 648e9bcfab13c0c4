"""Checks HTTP Archive files with tools Errand's authors did not write.

    check_har.py FILE.har [FILE.har ...]

Each file must validate against the HAR 1.2 JSON schema beside this script (written from the
specification, http://www.softwareishard.com/blog/har-12-spec/), and haralyzer must parse it and
read every entry's request, response and timings. Prints one line per file; exits 1 if any fails.
"""
import json
import pathlib
import sys

import jsonschema
from haralyzer import HarParser

SCHEMA = json.loads((pathlib.Path(__file__).parent / "har-1.2.schema.json").read_text())


def check(path):
    with open(path, encoding="utf-8") as file:
        har = json.load(file)
    jsonschema.validate(har, SCHEMA)
    parser = HarParser(har)
    # haralyzer puts entries without a page (Errand writes no pages) on a page of its own.
    parsed = 0
    for page in parser.pages:
        for entry in page.entries:
            parsed += 1
            _ = (entry.request.method, entry.request.url, entry.response.status, entry.timings)
    if parsed != len(har["log"]["entries"]):
        raise ValueError(f"haralyzer read {parsed} of {len(har['log']['entries'])} entries")
    return parsed


def main(paths):
    failed = False
    for path in paths:
        try:
            print(f"ok: {path}: {check(path)} entries")
        except Exception as error:  # noqa: BLE001 - every failure is reported, then the exit status says so
            failed = True
            print(f"FAILED: {path}: {type(error).__name__}: {error}")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
