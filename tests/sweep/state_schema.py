"""The sweep's state file (`instbench.sweep-state/v1`) held to schemas/sweep-state-v1.json: the
sweep tests that make instbench write one (sweep_run_faults, sweep_run_block, sweep_run_moto,
sweep_run_efa_moto) and `sweep status --format json` (sweep_status) validate what they read."""
import json
import os

import jsonschema

from testlib import check

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "..", "schemas", "sweep-state-v1.json")))
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid_state(doc, what):
    """DOC (a parsed state) checked against the schema; the first error fails the test, named by WHAT."""
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))
    check(not errors, "%s: not valid against schemas/sweep-state-v1.json: %s" % (
        what, "%s: %s" % (list(errors[0].absolute_path), errors[0].message[:300]) if errors else ""))
    return doc


def load_state(home, sweep_id):
    """The state file of SWEEP_ID under HOME (XDG_STATE_HOME=HOME/state), validated."""
    path = os.path.join(home, "state", "instbench", "sweeps", sweep_id + ".json")
    with open(path) as f:
        return valid_state(json.load(f), path)
