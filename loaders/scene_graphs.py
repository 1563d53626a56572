"""GQA scene graphs (Hudson & Manning, 2019) with their questions, as G-Retriever uses them.

`--path` is a scene-graph JSON file, or a directory holding `*sceneGraphs*.json` files and question
files: GQA's `*questions*.json` (`{qid: {imageId, question, answer, fullAnswer, …}}`) or a CSV
with columns `image_id, question, answer[, full_answer]` (G-Retriever's `questions.csv`; the
question id is the row number, or an `id`/`qid` column when there is one).

Textualization follows G-Retriever's `textualize_graph`: objects are numbered in the JSON's order,
a node's text is `name: …[; attribute: a, b]; (x,y,w,h): (x, y, w, h)`, an edge goes from an
object to the object its relation names, with the relation name as text. One Graph per image
(id = image id). With question files, only the images that the questions ask about are loaded (as
in G-Retriever) and the split is G-Retriever's 60/20/20 split of the image ids (seed 42); without
them every scene graph is loaded and there are no splits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.facts import Answers, DatasetFacts
from gr_neo4j.ingest.records import PER_SAMPLE, BadRecord, Edge, Fragment, GraphRecord, Node, QuestionRecord
from gr_neo4j.ingest.source import LoaderSpec, csv_rows, limited
from gr_neo4j.ingest.split import split_of_groups

NAME = "scene_graphs"
SPLITS = ("train", "val", "test")
OBJECT_FIELDS = ("name", "x", "y", "w", "h")


def node_text(obj: dict[str, Any]) -> str:
    """G-Retriever's object text: 'name: car; attribute: red, parked; (x,y,w,h): (10, 20, 30, 40)'."""
    text = f"name: {obj['name']}"
    if obj.get("attributes"):
        text += "; attribute: " + ", ".join(obj["attributes"])
    return text + "; (x,y,w,h): " + str((obj["x"], obj["y"], obj["w"], obj["h"]))


def graph_fragment(where: str, image_id: str, scene: Any) -> Fragment | BadRecord:
    if not isinstance(scene, dict) or not isinstance(scene.get("objects"), dict):
        return BadRecord(where, "not a scene graph: expected an object with an 'objects' map")
    objects = scene["objects"]
    if not objects:
        return BadRecord(where, "empty graph: the image has no objects")
    index = {object_id: i for i, object_id in enumerate(objects)}
    nodes, edges = [], []
    for object_id, obj in objects.items():
        if not isinstance(obj, dict):
            return BadRecord(where, f"object {object_id}: not a JSON object")
        missing = [f for f in OBJECT_FIELDS if f not in obj]
        if missing:
            return BadRecord(where, f"object {object_id}: missing field(s) {', '.join(missing)}")
        i = index[object_id]
        nodes.append(Node(image_id, str(i), node_text(obj), i))
        for rel in obj.get("relations") or []:
            target = rel.get("object") if isinstance(rel, dict) else None
            if target not in index:
                name = rel.get("name") if isinstance(rel, dict) else rel
                return BadRecord(where, f"relation to a missing object: {object_id} -[{name}]-> {target} (no such object in this image)")
            if not rel.get("name"):
                return BadRecord(where, f"relation of object {object_id} has no name")
            edges.append(Edge(image_id, str(i), rel["name"], str(index[target]), rel["name"], len(edges)))
    props = {"image_id": image_id, **{k: scene[k] for k in ("width", "height", "location", "weather") if isinstance(scene.get(k), (int, float, str))}}
    return Fragment(where, nodes=nodes, edges=edges, graph=GraphRecord(image_id, props))


def _load_json(path: Path) -> tuple[Any, BadRecord | None]:
    """The whole file's JSON, or one bad record naming the file and where it went wrong."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, BadRecord(str(path), f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})")
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, BadRecord(f"{path}:{exc.lineno}:{exc.colno}", f"bad JSON: {exc.msg}")
    except RecursionError:
        return None, BadRecord(str(path), "bad JSON: nested too deeply")


def _questions_json(path: Path) -> Iterator[tuple[str, str, dict] | BadRecord]:
    data, bad = _load_json(path)
    if bad:
        yield bad
        return
    if not isinstance(data, dict):
        yield BadRecord(str(path), "bad questions file: expected a JSON object {question id: {...}}")
        return
    for qid, q in data.items():
        where = f"{path}: question {qid}"
        if not isinstance(q, dict) or not all(isinstance(q.get(k), str) for k in ("imageId", "question", "answer")):
            yield BadRecord(where, "bad question: needs string fields imageId, question, answer")
            continue
        yield where, str(qid), {"image_id": q["imageId"], "question": q["question"], "answer": q["answer"], "full_answer": q.get("fullAnswer")}


def _questions_csv(path: Path) -> Iterator[tuple[str, str, dict] | BadRecord]:
    rows = csv_rows(path)
    header = next((r for r in rows if not isinstance(r, BadRecord)), None)
    fieldnames = [c.strip() for c in header[1]] if header else []
    missing = [c for c in ("image_id", "question", "answer") if c not in fieldnames]
    if missing:
        yield BadRecord(f"{path}:1", f"wrong header: missing column(s) {', '.join(missing)} (expected image_id, question, answer, full_answer)")
        return
    id_column = next((c for c in ("qid", "id") if c in fieldnames), None)
    for row_number, item in enumerate(rows):
        if isinstance(item, BadRecord):
            yield item
            continue
        where, values = item
        if len(values) != len(fieldnames):
            yield BadRecord(where, f"wrong column count: expected {len(fieldnames)} fields")
            continue
        row = dict(zip(fieldnames, values))
        qid = row[id_column] if id_column else str(row_number)
        yield where, qid, {"image_id": row["image_id"], "question": row["question"], "answer": row["answer"], "full_answer": row.get("full_answer")}


def _files(path: Path) -> tuple[list[Path], list[Path]]:
    if path.is_file():
        return [path], []
    files = [p for p in path.iterdir() if p.is_file()]  # not a directory named x_sceneGraphs.json
    graphs = sorted(p for p in files if p.suffix == ".json" and "scenegraph" in p.name.lower())
    questions = sorted(p for p in files if p.suffix == ".json" and "question" in p.name.lower()) + sorted(
        p for p in files if p.suffix == ".csv" and "question" in p.name.lower()
    )
    if not graphs:
        raise MissingInput(f"{path} has no *sceneGraphs*.json file ({LOADER.path_help})")
    return graphs, questions


def read(path: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    graph_files, question_files = _files(path)
    if splits is not None and not question_files:
        raise MissingInput(f"{path}: splits come from the questions, and there is no question file")
    # Questions first: they decide the split (by image) and which images are loaded.
    questions: list[tuple[str, str, dict]] = []
    for qfile in question_files:
        reader = _questions_csv(qfile) if qfile.suffix == ".csv" else _questions_json(qfile)
        for item in limited(reader, limit):
            if isinstance(item, BadRecord):
                yield item
            else:
                questions.append(item)
    split_of = split_of_groups([q["image_id"] for _, _, q in questions])
    wanted = [(w, qid, q) for w, qid, q in questions if splits is None or split_of[q["image_id"]] in splits]
    images = {q["image_id"] for _, _, q in wanted}

    found: set[str] = set()
    for gfile in graph_files:
        data, bad = _load_json(gfile)
        if bad:
            yield bad
            continue
        if not isinstance(data, dict):
            yield BadRecord(str(gfile), "bad scene graphs file: expected a JSON object {image id: scene graph}")
            continue
        # With questions, their images are the graphs to load; without, the first ``limit``.
        scenes = ((i, s) for i, s in data.items() if not question_files or i in images)
        for fragment in limited(scenes, None if question_files else limit, lambda s, f=gfile: graph_fragment(f"{f}: image {s[0]}", *s)):
            if isinstance(fragment, Fragment):
                found.add(fragment.graph.graph)
            yield fragment

    for where, qid, q in wanted:
        if q["image_id"] not in found:
            yield BadRecord(where, f"question refers to image {q['image_id']} that has no scene graph")
            continue
        props = {"full_answer": q["full_answer"]} if q.get("full_answer") else {}
        yield Fragment(
            where,
            questions=[QuestionRecord(qid, split_of[q["image_id"]], q["question"], [q["answer"]], graph=q["image_id"], on_graph=True, props=props)],
        )


LOADER = LoaderSpec(
    name=NAME,
    kind=PER_SAMPLE,
    splits=SPLITS,
    read=read,
    default_path=lambda: None,
    path_help="a GQA scene graphs JSON file, or a directory with *sceneGraphs*.json and *questions*.json / questions.csv",
    facts=DatasetFacts(Answers.SCENE_GRAPH, topk_e=3),
)
