"""The canonical long table and the ``table`` importer (verdictpack.evidence._table)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from verdictpack._errors import InputError
from verdictpack.evidence._table import (
    CANONICAL_COLUMNS,
    CHOICES,
    ImportResult,
    Judgment,
    JudgmentTable,
    Origin,
    read_table,
)

HEADER = ",".join(CANONICAL_COLUMNS[:9])  # the columns before p_treatment (optional)


def _canonical_rows(seed: int, roots: int = 6) -> list[str]:
    rng = random.Random(seed)
    rows = []
    for r in range(roots):
        for judge in ("judge-a", "judge-b"):
            for order in ("treatment_first", "null_first"):
                cost = f"{rng.uniform(0, 0.01):.6f}" if rng.random() < 0.7 else ""
                rows.append(f"root-{r},{judge},model,{order},{rng.choice(CHOICES)},0,{cost},,")
        rows.append(f"root-{r},h1,human,unknown,{rng.choice(CHOICES)},0,,,2026-11-0{1 + r % 9}")
    return rows


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_round_trip_csv_table_csv(tmp_path: Path) -> None:
    lines = [HEADER, *_canonical_rows(1)]
    lines.append('root-0,judge-a,model,treatment_first,tie,1,,"says ""tie"", then\nstops",')
    p = _write(tmp_path, "j.csv", lines)
    result = read_table(p)
    assert result.defects == ()
    assert len(result.table) == len(lines) - 1
    first = result.table.to_csv_bytes()
    again = tmp_path / "again.csv"
    again.write_bytes(first)
    second = read_table(again)
    assert second.defects == ()
    assert second.table.to_csv_bytes() == first
    assert first.count(b"\r") == 0
    # records and back: same table bytes; the raw text with a quoted newline survives
    js = result.judgments
    assert js[-1].raw == 'says "tie", then\nstops' and js[-1].trial == 1
    assert JudgmentTable.from_judgments(js).to_csv_bytes() == first
    assert isinstance(result, ImportResult)


def test_plain_split_and_csv_module_agree(tmp_path: Path) -> None:
    rows = _canonical_rows(2)
    plain = read_table(_write(tmp_path, "plain.csv", [HEADER, *rows]))
    # the same data, every field quoted: read by the csv module
    quoted = [",".join(f'"{f}"' for f in line.split(",")) for line in [HEADER, *rows]]
    viacsv = read_table(_write(tmp_path, "quoted.csv", quoted))
    assert plain.defects == viacsv.defects == ()
    assert plain.table.to_csv_bytes() == viacsv.table.to_csv_bytes()
    assert [j.origin.where for j in plain.judgments if j.origin] == [
        j.origin.where for j in viacsv.judgments if j.origin
    ]
    assert plain.judgments[0].origin == Origin("plain.csv", "line 2")


def test_jsonl_canonical(tmp_path: Path) -> None:
    recs = [
        {"root_id": "r1", "rater_id": "m", "rater_kind": "model", "order": "null_first",
         "choice": "treatment", "trial": 2, "cost": 0.5},
        {"root_id": "r1", "rater_id": "h", "rater_kind": "human", "order": "unknown",
         "choice": "tie", "timestamp": "2026-11-02T10:00:00Z"},
    ]  # fmt: skip
    p = tmp_path / "j.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n\n", encoding="utf-8")
    result = read_table(p, display="judgments.jsonl")
    assert result.defects == ()
    js = result.judgments
    assert js[0] == Judgment(
        "r1", "m", "model", "null_first", "treatment", 2, 0.5, None, None,
        Origin("judgments.jsonl", "line 1"),
    )  # fmt: skip
    assert js[1].cost is None and js[1].trial == 0 and js[1].timestamp == "2026-11-02T10:00:00Z"


def test_mapping_value_maps_and_treatment_side(tmp_path: Path) -> None:
    lines = [
        "item,annotator,who,picked,treated_side,notes",
        "p1,ann1,person,A,A,",  # treatment shown A, picked A -> treatment, treatment_first
        "p1,ann2,person,B,A,",  # picked the other side -> null_partner
        "p2,ann1,person,first,second,x",  # treatment second, picked first -> null_partner
        "p2,ann2,person,B,B,",  # treatment B, picked B -> treatment, null_first
        "p3,ann1,person,same,first,",  # value-mapped to tie
    ]
    p = _write(tmp_path, "mturk.csv", lines)
    result = read_table(
        p,
        mapping={
            "root_id": "item",
            "rater_id": "annotator",
            "rater_kind": "who",
            "choice": "picked",
        },
        value_maps={"rater_kind": {"person": "human"}, "choice": {"same": "tie"}},
        treatment_side_column="treated_side",
    )
    assert result.defects == ()
    got = [(j.root_id, j.rater_id, j.rater_kind, j.order, j.choice) for j in result.judgments]
    assert got == [
        ("p1", "ann1", "human", "treatment_first", "treatment"),
        ("p1", "ann2", "human", "treatment_first", "null_partner"),
        ("p2", "ann1", "human", "null_first", "null_partner"),
        ("p2", "ann2", "human", "null_first", "treatment"),
        ("p3", "ann1", "human", "treatment_first", "tie"),
    ]


def test_bad_arguments_refused(tmp_path: Path) -> None:
    p = _write(tmp_path, "j.csv", [HEADER])
    with pytest.raises(InputError, match="mapping"):
        read_table(p, mapping={"verdict": "x"})
    with pytest.raises(InputError, match="order"):
        read_table(p, mapping={"order": "o"}, treatment_side_column="side")
    with pytest.raises(InputError, match="choice"):
        read_table(p, value_maps={"choice": {"A": "left"}})


def test_each_bad_row_refused_with_file_and_line(tmp_path: Path) -> None:
    lines = [
        HEADER,
        "r1,m1,model,treatment_first,treatment,0,,,",  # fine (line 2)
        "r1,m1,robot,treatment_first,treatment,0,,,",  # 3 bad rater_kind
        "r1,m1,model,sideways,treatment,0,,,",  # 4 bad order
        "r1,m1,model,null_first,yes,0,,,",  # 5 bad choice
        "r1,m1,model,null_first,tie,-1,,,",  # 6 negative trial
        "r1,m1,model,null_first,tie,one,,,",  # 7 non-integer trial
        "r1,m1,model,null_first,tie,0,-0.5,,",  # 8 negative cost
        "r1,m1,model,null_first,tie,0,nan,,",  # 9 non-finite cost
        ",m1,model,null_first,tie,0,,,",  # 10 empty root id
        "r1,m1,model,null_first,tie",  # 11 too few fields
        "",  # 12 blank: skipped, not a defect
        "r2,m1,model,null_first,invalid,0,0.25,,",  # 13 fine
    ]
    p = _write(tmp_path, "bad.csv", lines)
    result = read_table(p, display="data/bad.csv")
    where = [(d.file, d.path, d.received) for d in result.defects]
    assert where == [
        ("data/bad.csv", "line 3", "robot"),
        ("data/bad.csv", "line 4", "sideways"),
        ("data/bad.csv", "line 5", "yes"),
        ("data/bad.csv", "line 6", "-1"),
        ("data/bad.csv", "line 7", "one"),
        ("data/bad.csv", "line 8", "-0.5"),
        ("data/bad.csv", "line 9", "nan"),
        ("data/bad.csv", "line 10", ""),
        ("data/bad.csv", "line 11", 5),
    ]
    assert "column rater_kind" in result.defects[0].expected
    assert "model, human" in result.defects[0].expected
    assert result.defects[0].message().startswith('data/bad.csv: line 3: received "robot"')
    assert [o.where for o in (j.origin for j in result.judgments) if o] == ["line 2", "line 13"]


def test_mapped_defects_name_the_source_column_and_quoted_lines(tmp_path: Path) -> None:
    lines = [
        "item,annotator,who,picked,side",
        'p1,a1,human,"A\nreally",A',  # lines 2-3: a choice that is not a position
        "p1,a2,human,A,left",  # line 4: bad side
    ]
    p = _write(tmp_path, "m.csv", lines)
    result = read_table(
        p,
        mapping={
            "root_id": "item",
            "rater_id": "annotator",
            "rater_kind": "who",
            "choice": "picked",
        },
        treatment_side_column="side",
    )
    assert [(d.path, d.received) for d in result.defects] == [
        ("line 2", "A\nreally"),
        ("line 4", "left"),
    ]
    assert "'picked' (for choice)" in result.defects[0].expected
    assert len(result.table) == 0


def test_file_level_defects(tmp_path: Path) -> None:
    txt = _write(tmp_path, "j.txt", [HEADER])
    assert read_table(txt).defects[0].expected == "a .csv, .jsonl or .parquet file"
    missing = read_table(tmp_path / "absent.csv").defects
    assert missing[0].path == "(file)"
    nocol = read_table(_write(tmp_path, "n.csv", ["root_id,rater_id,choice", "r,a,tie"]))
    assert [d.path for d in nocol.defects] == ["line 1"]  # one defect names both columns
    assert nocol.defects[0].expected == "a header with the columns 'rater_kind', 'order'"
    # the likely cause named: another separator, or a name in another case or with spaces
    semi = read_table(_write(tmp_path, "s.csv", [HEADER.replace(",", ";"), "x"])).defects
    assert len(semi) == 1 and "the header is one column holding ';'" in semi[0].expected
    case = HEADER.replace("root_id", "Root_ID").replace("order", " order")
    cased = read_table(_write(tmp_path, "c.csv", [case])).defects
    assert cased[0].expected == (
        "a header with the columns 'root_id', 'order' (names match exactly, case and spaces "
        "included; the header has 'Root_ID' for 'root_id', ' order' for 'order')"
    )
    j = tmp_path / "b.jsonl"
    j.write_text('{"root_id": "r"\n[1, 2]\n', encoding="utf-8")
    assert [d.path for d in read_table(j).defects] == ["line 1", "line 2"]


def test_defects_capped_with_count(tmp_path: Path) -> None:
    lines = [HEADER] + [f"r{i},m,model,bad,tie,0,,," for i in range(80)]
    result = read_table(_write(tmp_path, "many.csv", lines))
    assert len(result.defects) == 51
    assert result.defects[-1].received == "30 more defects not listed"


def test_duplicates_found_with_both_origins(tmp_path: Path) -> None:
    a = _write(
        tmp_path,
        "a.csv",
        [HEADER, "r1,m,model,null_first,tie,0,,,", "r2,m,model,null_first,tie,0,,,"],
    )
    b = _write(
        tmp_path,
        "b.csv",
        [HEADER, "r3,m,model,null_first,tie,0,,,", "r1,m,model,null_first,treatment,0,,,"],
    )
    table = JudgmentTable.concat([read_table(a).table, read_table(b).table])
    dups = table.duplicates()
    assert len(dups) == 1
    d = dups[0]
    assert (d.file, d.path) == ("b.csv", "line 3")
    assert "already at a.csv: line 2" in d.expected
    assert d.received == {"root_id": "r1", "rater_id": "m", "order": "null_first", "trial": 0}
    # another trial or order is not a duplicate
    distinct = [
        HEADER,
        "r1,m,model,null_first,tie,0,,,",
        "r1,m,model,null_first,tie,1,,,",
        "r1,m,model,treatment_first,tie,0,,,",
    ]
    ok = _write(tmp_path, "c.csv", distinct)
    assert read_table(ok).table.duplicates() == []


def test_sorted_by_is_independent_of_file_order(tmp_path: Path) -> None:
    rows = _canonical_rows(3, roots=8)
    registered = [f"root-{r}" for r in random.Random(5).sample(range(8), 8)]
    outputs = set()
    for seed in range(4):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        table = read_table(_write(tmp_path, f"s{seed}.csv", [HEADER, *shuffled])).table
        outputs.add(table.sorted_by(registered).to_csv_bytes())
    assert len(outputs) == 1
    body = outputs.pop().decode().splitlines()[1:]
    assert [line.split(",")[0] for line in body[::5]] == registered
    with pytest.raises(InputError, match="root_order"):
        table.sorted_by(registered[:-1])


def test_table_from_columns_and_validation() -> None:
    t = JudgmentTable.from_columns(
        ["b", "a"], ["m", "m"], np.array([0, 1]), np.array([0, 2]), np.array([3, 2])
    )
    assert t.roots == ("a", "b") and len(t) == 2
    assert [j.choice for j in t.judgments()] == ["invalid", "tie"]
    assert t.judgments()[0].origin is None
    with pytest.raises(InputError, match="choice"):
        JudgmentTable.from_columns(["a"], ["m"], np.array([0]), np.array([0]), np.array([4]))
    with pytest.raises(InputError):
        JudgmentTable.from_judgments([Judgment("a", "m", "model", "first", "tie")])
    assert len(JudgmentTable.concat([])) == 0
    with pytest.raises(ValueError):
        t.cost[0] = 1.0  # frozen arrays


def test_compensating_field_counts_are_not_split_blindly(tmp_path: Path) -> None:
    lines = [
        HEADER,
        "r1,m1,model,null_first,tie,0,,,,",  # line 2: one field too many
        "r1,m2,model,null_first,tie,0,,",  # line 3: one too few (the total count matches)
        "r1,m3,model,null_first,tie,0,,,",  # line 4: fine
    ]
    result = read_table(_write(tmp_path, "c.csv", lines))
    assert [(d.path, d.received) for d in result.defects] == [("line 2", 10), ("line 3", 8)]
    assert [j.rater_id for j in result.judgments] == ["m3"]


def test_every_bad_cell_of_a_row_is_reported(tmp_path: Path) -> None:
    lines = [HEADER, "r1,m1,robot,sideways,yes,0,,,"]
    result = read_table(_write(tmp_path, "cells.csv", lines))
    assert sorted(d.received for d in result.defects) == ["robot", "sideways", "yes"]
    assert {d.path for d in result.defects} == {"line 2"}


def test_mixed_quoting_matches_the_csv_module(tmp_path: Path) -> None:
    import csv

    lines = [
        HEADER,
        "r1,m1,model,null_first,tie,0,,,",
        'r1,m2,model,null_first,tie,0,,"a, quoted\nraw over\nthree lines",',  # lines 3-5
        "r2,m1,model,null_first,treatment,0,,,",  # line 6
        'r2,m2,model,null_first,tie,0,,5" tall,',  # line 7: a stray quote, unquoted field
        'r3,m1,model,null_first,tie,0,,"b\nc",',  # lines 8-9
        "r3,m2,model,null_first,tie,0,,,",  # line 10
    ]
    for k, chosen in enumerate([lines[:5] + lines[5:6], lines]):
        p = _write(tmp_path, f"mixed{k}.csv", chosen)
        result = read_table(p)
        assert result.defects == ()
        with p.open(newline="") as fh:
            expected = [row[7] or None for row in list(csv.reader(fh))[1:]]
        assert [j.raw for j in result.judgments] == expected
    assert [j.origin.where for j in result.judgments if j.origin] == [
        "line 2", "line 3", "line 6", "line 7", "line 8", "line 10"
    ]  # fmt: skip


def test_crlf_file_reads_like_lf(tmp_path: Path) -> None:
    rows = [HEADER, *_canonical_rows(4), 'r9,m,model,null_first,tie,0,,"x\r\ny",', "bad,row"]
    lf = tmp_path / "lf.csv"
    lf.write_bytes(("\n".join(rows) + "\n").encode())
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    a, b = read_table(lf, display="f.csv"), read_table(crlf, display="f.csv")
    # the quoted CR LF is a line break inside the field: the bad row is on the last line
    assert [d.path for d in a.defects] == [d.path for d in b.defects] == [f"line {len(rows) + 1}"]
    assert len(a.table) == len(b.table) == len(rows) - 2
    assert a.judgments[-1].raw == b.judgments[-1].raw == "x\r\ny"


def test_value_maps_apply_to_distinct_values_and_may_merge_ids(tmp_path: Path) -> None:
    """Ids and enums are mapped over their distinct values; a map may merge two source ids."""
    lines = [
        "root_id,rater_id,rater_kind,order,choice,trial,cost,raw,timestamp",
        "r1,J1,m,tf,treatment,0,0.5,,",
        "R1,j1,m,nf,null_partner,1,,,",
        "r2,J1,h,unknown,tie,,,,",
        "r2,j2,h,unknown,tie,x,,,",
        " ,j2,m,tf,tie,0,,,",
    ]
    maps = {
        "root_id": {"R1": "r1"},
        "rater_id": {"J1": "j1"},
        "rater_kind": {"m": "model", "h": "human"},
        "order": {"tf": "treatment_first", "nf": "null_first"},
    }
    result = read_table(_write(tmp_path, "maps.csv", lines), value_maps=maps)
    table = result.table
    assert [(d.path, d.received) for d in result.defects] == [("line 5", "x"), ("line 6", " ")]
    assert table.roots == ("r1", "r2") and table.raters == ("j1",)
    assert [(j.root_id, j.rater_id, j.rater_kind, j.order, j.trial) for j in result.judgments] == [
        ("r1", "j1", "model", "treatment_first", 0),
        ("r1", "j1", "model", "null_first", 1),
        ("r2", "j1", "human", "unknown", 0),
    ]
    assert result.judgments[0].cost == 0.5 and result.judgments[1].cost is None


def test_mixed_quoting_reads_the_same_with_and_without_non_ascii_text(tmp_path: Path) -> None:
    """Line counts come from the bytes for ASCII files and from the lines otherwise: the rows,
    lines and defects are the same either way (and those of the csv module)."""
    import csv

    rng = random.Random(4)
    rows = [HEADER]
    for r in range(60):
        raw = rng.choice(["", "plain", '"a, b"', '"x\ny"', '"say ""hi"""', "5in"])
        rows.append(f"r{r},m{r % 3},model,null_first,tie,0,,{raw},")
        if r % 17 == 0:
            rows.append(f"r{r},m9,model,null_first,tie")  # short row: a defect
        if r % 23 == 0:
            rows.append("")  # a blank line
    results = []
    for k, accent in enumerate(("", "é")):
        lines = [line.replace("plain", "plain" + accent) for line in rows]
        p = _write(tmp_path, f"m{k}.csv", lines)
        result = read_table(p, display="m.csv")
        with p.open(newline="", encoding="utf-8") as fh:
            expected = [row[7] or None for row in list(csv.reader(fh))[1:] if len(row) == 9]
        assert [j.raw for j in result.judgments] == expected
        results.append(result)
    plain, accented = results
    assert [d.path for d in plain.defects] == [d.path for d in accented.defects] != []
    assert [j.origin for j in plain.judgments] == [j.origin for j in accented.judgments]
    assert [j.raw for j in plain.judgments] == [
        None if j.raw is None else j.raw.replace("é", "") for j in accented.judgments
    ]


def test_p_treatment_column_round_trips_and_is_checked(tmp_path: Path) -> None:
    lines = [
        ",".join(CANONICAL_COLUMNS),
        "r1,j,model,treatment_first,treatment,0,0.001,,,0.75",
        "r1,j,model,null_first,null_partner,0,,,,",
        "r2,j,model,null_first,treatment,0,,,,1.5",
        "r2,j,model,treatment_first,treatment,0,,,,maybe",
    ]
    p = _write(tmp_path, "p.csv", lines)
    result = read_table(p)
    assert [(d.path, d.received) for d in result.defects] == [
        ("line 4", "1.5"),
        ("line 5", "maybe"),
    ]
    t = result.table
    assert t.p_treatment[0] == 0.75 and math.isnan(t.p_treatment[1])
    again = _write(tmp_path, "again.csv", t.to_csv_bytes().decode().splitlines())
    assert read_table(again).table.p_treatment.tolist()[0] == 0.75
    assert [j.p_treatment for j in t.judgments()] == [0.75, None]


# ---------------------------------------------------------------- issue 22


@pytest.mark.parametrize("cost", ["1.7e308", "1e10", "1e309"])
def test_a_cost_past_the_config_bound_is_refused(tmp_path: Path, cost: str) -> None:
    """Issue 22 row 8: 1.7e308 passed and summed to inf; costs are bounded like config prices."""
    rows = [
        HEADER,
        f"p1,j,model,null_first,treatment,0,{cost},,",
        "p2,j,model,null_first,tie,0,2.5,,",
    ]
    result = read_table(_write(tmp_path, "t.csv", rows))
    assert [(d.path, d.received) for d in result.defects] == [("line 2", cost)]
    assert "1e+09" in result.defects[0].expected
    assert result.table.cost.tolist() == [2.5]


@pytest.mark.parametrize("name", ["t.csv", "q.csv"])
def test_a_header_naming_any_column_twice_is_refused(tmp_path: Path, name: str) -> None:
    """Issue 22 row 15: a repeated column not read was accepted silently (either CSV path)."""
    header = HEADER + ",note,note"
    row = "p1,j,model,null_first,treatment,0,,,,a,b"
    if name == "q.csv":  # quotes: the csv module's path
        row = 'p1,j,model,null_first,treatment,0,,"x",,a,b'
    result = read_table(_write(tmp_path, name, [header, row]))
    assert [(d.path, d.received) for d in result.defects] == [("line 1", "note")]
    assert len(result.table) == 0


def test_deep_or_giant_jsonl_values_are_defects(tmp_path: Path) -> None:
    """Issue 22 row 8: RecursionError / ValueError (exit 1) before."""
    base = '{"root_id": "p1", "rater_id": "j", "rater_kind": "model", "order": "null_first"'
    rows = [f'{base}, "choice": "tie", "raw": {"[" * 3000 + "]" * 3000}}}']
    rows.append(f'{base}, "choice": "tie", "trial": {"1" * 5000}}}')
    rows.append(f'{base}, "choice": "tie", "trial": 1}}')
    result = read_table(_write(tmp_path, "t.jsonl", rows))
    assert [d.path for d in result.defects] == ["line 1", "line 2"]
    assert "200 levels" in result.defects[0].expected
    assert "100 digits" in result.defects[1].expected
    assert len(result.table) == 1


# ---------------------------------------------------------------- issue 23: the csv module reads


def test_broken_quoting_is_a_defect_at_the_line_where_the_row_starts(tmp_path: Path) -> None:
    """Text after a closing quote was joined to the field, and a quote never closed swallowed the
    rest of the file into one field; each is now a defect at its row's first line, the other rows
    read."""
    lines = [
        HEADER,
        "r1,m1,model,null_first,tie,0,,,",  # line 2
        'r1,m2,model,null_first,tie,0,,"two\nlines"x,',  # lines 3-4: text after the quote
        "r2,m1,model,null_first,tie,0,,,",  # line 5
        'r2,m2,model,null_first,tie,0,,"never closed,',  # line 6: open to the end
        "r3,m1,model,null_first,tie,0,,,",  # line 7
    ]
    result = read_table(_write(tmp_path, "q.csv", lines), display="data/q.csv")
    assert [(d.file, d.path) for d in result.defects] == [
        ("data/q.csv", "line 3"),
        ("data/q.csv", "line 6"),
    ]
    assert all("every quote closed" in d.expected for d in result.defects)
    assert [j.origin.where for j in result.judgments if j.origin] == ["line 2", "line 5"]


def test_rows_over_many_chunks_keep_their_first_lines(tmp_path: Path) -> None:
    """Rows are read a chunk at a time: each row's line is where it starts (quoted line ends of
    every kind), the same as following the csv module row by row, across chunk boundaries."""
    import csv

    rng = random.Random(23)
    rows = [HEADER]
    for r in range(1500):
        raw = rng.choice(["", "", "", '"a\nb"', '"c\r\nd\re"', '"say ""hi"""'])
        rows.append(f"r{r},m{r % 3},model,null_first,tie,0,,{raw},")
        if r % 97 == 0:
            rows.append(f"r{r},m9,model")  # short row: a defect
        if r % 89 == 0:
            rows.append("")  # a blank line
    p = _write(tmp_path, "many.csv", rows)
    result = read_table(p)
    expected_lines, expected_bad = [], []
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        next(reader)
        start = reader.line_num + 1
        for row in reader:
            if len(row) == 9:
                expected_lines.append(f"line {start}")
            elif row:
                expected_bad.append(f"line {start}")
            start = reader.line_num + 1
    assert [j.origin.where for j in result.judgments if j.origin] == expected_lines
    assert [d.path for d in result.defects] == expected_bad


def test_a_field_past_the_csv_modules_default_limit_is_read(tmp_path: Path) -> None:
    """A raw answer of 200,000 characters is read (the csv module refuses fields past 131,072
    characters unless told otherwise)."""
    lines = [HEADER, f"r1,m1,model,null_first,tie,0,,{'x' * 200_000},"]
    result = read_table(_write(tmp_path, "long.csv", lines))
    assert result.defects == ()
    assert result.judgments[0].raw == "x" * 200_000
