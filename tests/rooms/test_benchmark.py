"""The room benchmark (benchmarks/room.py) at a small size, on SQLite and PostgreSQL: every simulated
student's answer is recorded exactly once, the flooding device keeps one vote, every phone sees the reveal,
and the command prints its rows. Not timed: the latencies are judged by `python -m benchmarks --only room`."""

from __future__ import annotations

import math

from benchmarks import room
from benchmarks.common import Options


def test_twenty_students_are_each_recorded_once_and_all_follow_the_reveal(database_url):
    sim = room.simulate(20, 1.0, database_url, poll_s=0.2)
    assert sim.recorded - sim.flood_votes == 20 and sim.flood_votes == 1 and sim.refused == 0
    assert len(sim.answer_to_count_s) == 20 and all(t >= 0 for t in sim.answer_to_count_s)
    assert len(sim.reveal_to_phone_s) == 20 and all(t >= 0 for t in sim.reveal_to_phone_s)


def test_two_servers_on_one_database_count_every_answer_once(database_url):
    sim = room.simulate(20, 1.0, database_url, poll_s=0.2, servers=2)
    assert sim.recorded - sim.flood_votes == 20 and sim.flood_votes == 1
    assert len(sim.reveal_to_phone_s) == 20


def test_the_benchmark_reports_its_rows(monkeypatch, tmp_path):
    monkeypatch.delenv("EXPLORER_DATABASE_URL", raising=False)
    monkeypatch.setattr(
        room, "simulate", lambda n, w, url, servers=1: room.Simulation(n, n + 1, 1, [0.1] * n, [0.2] * n, 0, 1.0, 4.0)
    )
    result = room.run(Options(quick=True, memory=False))
    rows = {row.measure: row for row in result.rows}
    assert rows["answers recorded"].value == "20/20" and rows["answers recorded"].met
    assert rows["p95 reveal \u2192 phone shows it"].met and not math.isnan(
        float(rows["p95 answer \u2192 presenter's count"].value[:-2])
    )
