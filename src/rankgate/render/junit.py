"""The gate report as JUnit XML, which CI systems show as a test report (one test per gate)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from rankgate.render.escape import xml_text
from rankgate.render.gate import headline

if TYPE_CHECKING:
    from rankgate.gate.runner import GateReport


def junit_xml(report: GateReport) -> str:
    """A ``<testsuite>``: a failed gate is a ``<failure>``; a gate that checked nothing (its only
    rules are limits against a baseline, and there was none) is ``<skipped>``; a warning or an
    inconclusive gate passes with its headline in ``<system-out>`` (JUnit has no "warning" state).

    Names come from the user: the characters XML 1.0 forbids (control characters) are replaced
    (`xml_text`) in every attribute and text, so the report stays well-formed."""
    failures = sum(o.counts_as == "fail" for o in report.outcomes)
    skipped = sum(o.checked_nothing for o in report.outcomes)
    suite = ET.Element(
        "testsuite",
        name="rankgate gate",
        tests=str(len(report.outcomes)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for outcome in report.outcomes:
        classname = xml_text(f"rankgate.{report.run_name}")
        case = ET.SubElement(suite, "testcase", classname=classname, name=xml_text(outcome.gate.name))
        line = xml_text(headline(outcome))
        if outcome.counts_as == "fail":
            failure = ET.SubElement(case, "failure", message=line, type=xml_text(outcome.status))
            failure.text = line
        elif outcome.checked_nothing:
            ET.SubElement(case, "skipped", message=line)
        ET.SubElement(case, "system-out").text = line
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
