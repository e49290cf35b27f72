"""saijax.learn.run_metrics: metrics.jsonl after a kill mid-write.

A kill while a generation's line is appended leaves either a torn line (cut
mid-line: not JSON) or, cut by exactly its last byte, a whole line without
its newline. The resumed run's repair must leave a file that the next
line's append keeps whole: every earlier generation's line survives.
"""

import json

import pytest

from saijax.learn import run_metrics


def _lines(*generations):
    return [json.dumps({"generation": g, "games": 10 + g, "alpha_empty": 0.5 * g}) + "\n" for g in generations]


@pytest.fixture
def writer(tmp_path):
    writer = run_metrics.MetricsWriter(str(tmp_path))
    yield writer
    writer.close()


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_a_kill_that_cut_only_the_final_newline_keeps_both_lines_through_the_next_write(writer):
    lines = _lines(0, 1)
    with open(writer.path, "w", encoding="utf-8") as f:
        f.write("".join(lines)[:-1])  # exactly the final byte cut: generation 1's line is whole
    assert writer.generations() == {0, 1}  # the cut line still reads as generation 1's
    log = []
    warnings = writer.repair(log.append)
    assert log == warnings and len(warnings) == 1
    assert "line 2 lacks its newline" in warnings[0] and "generation 1's" in warnings[0]
    assert _read(writer.path) == "".join(lines)  # nothing dropped, the newline back
    writer.write(2, {"games": 12, "alpha_empty": 1.0})
    text = _read(writer.path)
    assert text.startswith("".join(lines)) and text.endswith("\n")
    assert [json.loads(line)["generation"] for line in text.splitlines()] == [0, 1, 2]
    assert writer.generations() == {0, 1, 2}
    assert writer.repair(log.append) == [] and _read(writer.path) == text  # a sound file is left as it is


def test_a_line_torn_mid_way_is_dropped_with_a_warning_naming_its_generation(writer):
    lines = _lines(0, 1)
    with open(writer.path, "w", encoding="utf-8") as f:
        f.write("".join(lines)[:-15])  # generation 1's line cut mid-way
    log = []
    warnings = writer.repair(log.append)
    assert log == warnings and len(warnings) == 1
    assert "line 2 is torn" in warnings[0] and "dropped generation 1's metrics line" in warnings[0]
    assert _read(writer.path) == lines[0]
    writer.write(1, {"games": 11, "alpha_empty": 0.5})  # what the run writes again from the checkpoint
    assert [json.loads(line)["generation"] for line in _read(writer.path).splitlines()] == [0, 1]


def test_a_torn_line_without_its_generation_and_blank_lines_are_dropped(writer):
    with open(writer.path, "w", encoding="utf-8") as f:
        f.write(_lines(0)[0] + "\n" + '{"gam')
    warnings = writer.repair(lambda _: None)
    assert len(warnings) == 1 and "an unreadable metrics line" in warnings[0]
    assert _read(writer.path) == _lines(0)[0]


def test_nothing_to_repair(writer):
    assert writer.repair(lambda _: None) == []  # no file yet
    with open(writer.path, "w", encoding="utf-8") as f:
        f.write("".join(_lines(0, 1)))
    assert writer.repair(lambda _: None) == [] and _read(writer.path) == "".join(_lines(0, 1))
