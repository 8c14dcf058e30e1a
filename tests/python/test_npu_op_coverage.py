"""docs/NPU_OPERATORS.md accounts for every operator torch_npu 2.14 documents
(tests/python/data/torch_npu_2_14_operators.txt, 215 names): each is either emulated, i.e. an
attribute of the emulator's ``torch_npu`` with a row in the emulated table, or has a row in
the "not emulated" table saying why. The emulated count is printed. The other way round, every
operator the emulator declares (``@operator``, read from ``torch_npu._ops.OPERATORS``) is named
in the emulated table."""

import os
import re

import pytest

import overlay_support
from overlay_support.npu_op_checks import torch_npu

DATA = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data", "torch_npu_2_14_operators.txt"
)
DOC = os.path.join(overlay_support.REPO_ROOT, "docs", "NPU_OPERATORS.md")
EMULATED_HEADER = "| operator | what it computes | backward |"
NOT_EMULATED_HEADER = "| operator | why it is not emulated |"
# A reason says what stands in the way, never that the work is pending.
PENDING = re.compile(r"\b(todo|tbd|not (done|yet)|later|pending|wip)\b", re.I)


def documented():
    with open(DATA) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def table_rows(header):
    """The rows (lists of cells) of the table of docs/NPU_OPERATORS.md under ``header``."""
    with open(DOC) as f:
        lines = f.read().splitlines()
    assert header in lines, f"no table {header!r} in NPU_OPERATORS.md"
    rows = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def emulated_names():
    """Operators named in the emulated table's first column: `name(...)`."""
    return {name for row in table_rows(EMULATED_HEADER) for name in re.findall(r"`(\w+)\(", row[0])}


def not_emulated():
    """{operator: reason} of the not-emulated table (first column `name`, one or more)."""
    reasons = {}
    for row in table_rows(NOT_EMULATED_HEADER):
        for name in re.findall(r"`(\w+)`", row[0]):
            assert name not in reasons, f"{name}: two rows in the not-emulated table"
            reasons[name] = row[1]
    return reasons


def test_the_list_has_215_unique_names():
    names = documented()
    assert len(names) == 215 and len(set(names)) == 215


def test_every_documented_operator_is_emulated_or_has_a_reason(capsys):
    emulated, reasons = emulated_names(), not_emulated()
    done = [n for n in documented() if n in emulated and hasattr(torch_npu, n)]
    missing = [n for n in documented() if n not in done and n not in reasons]
    with capsys.disabled():
        print(
            f"\ntorch_npu 2.14 operators emulated: {len(done)} of {len(documented())}, "
            f"{len(reasons)} with a reason for not being emulated"
        )
    assert not missing, f"neither emulated nor explained: {missing}"


def test_emulated_rows_are_real_and_not_also_refused():
    emulated, reasons = emulated_names(), not_emulated()
    assert not emulated & set(reasons), sorted(emulated & set(reasons))
    absent = sorted(n for n in emulated & set(documented()) if not hasattr(torch_npu, n))
    assert not absent, f"in the emulated table but not in torch_npu: {absent}"


def test_every_declared_operator_is_in_the_emulated_table():
    cells = " ".join(" ".join(row) for row in table_rows(EMULATED_HEADER))
    declared = sorted(torch_npu._ops.OPERATORS)
    assert "npu_rms_norm" in declared
    missing = [n for n in declared if not re.search(r"`%s[(`]" % re.escape(n), cells)]
    assert not missing, f"declared with @operator but not in the emulated table: {missing}"


@pytest.mark.parametrize("name", sorted(not_emulated()))
def test_a_reason_is_a_reason(name):
    reason = not_emulated()[name]
    assert len(reason) >= 20 and not PENDING.search(reason), (name, reason)
    assert name in documented(), f"{name} is not one of torch_npu 2.14's operators"
