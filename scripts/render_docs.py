"""Render docs/benchmarks.md and the README's headline table from the JSON under docs/bench/.

Every figure the docs quote is read here from the JSON a benchmark wrote, with the command, date,
machine and revision that JSON records, so a figure cannot drift from the run behind it:
`tests/test_docs.py` fails when the committed pages differ from what this script renders.

    python scripts/render_docs.py           # rewrite docs/benchmarks.md and the README's table
    python scripts/render_docs.py --check   # exit 1, naming the pages that differ, if any
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "docs" / "bench"
PAGE = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"
HEADLINE_START, HEADLINE_END = "<!-- headline:start -->", "<!-- headline:end -->"
HOPS = ("1", "2", "3")


def load(name: str) -> dict:
    return json.loads((BENCH / f"{name}.json").read_text())


def num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def per_hop(values: Iterable[float | None], digits: int = 3) -> str:
    return " / ".join(num(v, digits) for v in values)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def source(*names: str) -> str:
    """One line per JSON: the file, the command that writes it, when, where and at which revision."""
    out = []
    for name in names:
        p = load(name)["provenance"]
        machine = p.get("machine", {})
        load_avg = machine.get("load_average_start"), machine.get("load_average_end")
        if load_avg == (None, None):
            load_avg = machine.get("load_average") or [None, None]
        start, end = (a[0] if isinstance(a, list) else a for a in load_avg)
        where = f"{machine.get('cpus', '?')} CPUs"
        if start is not None:
            where += f", load average {start:.1f} → {end:.1f}" if end is not None else f", load average {start:.1f}"
        rev = (p.get("git_revision") or "no git checkout")[:12]
        how = "; date and revision from git history" if p.get("reconstructed") else ""
        written = re.search(r"--out (\S+\.json)", p["command"])
        if written and Path(written.group(1)).name != f"{name}.json":
            # A table kept beside the one that took its name: re-running the command writes the other file.
            how += f"; written as `{written.group(1)}`, renamed since"
        out.append(f"- [`docs/bench/{name}.json`](bench/{name}.json): `{p['command']}` ({p['date'][:10]}, {where}, revision {rev}{how})")
    return "\n".join(out)


# --- sections --------------------------------------------------------------------------------


def graph_answers() -> str:
    z = load("metaqa_zero_shot")
    s = load("metaqa_zero_shot_spread")

    def rows(report: dict) -> list[list[str]]:
        out = []
        for h in HOPS:
            tr, un = report["hops"][h], report["hops"][h]["untrained"]
            t, u = tr["modes"]["paths"], un["modes"]["paths"]
            out.append([
                h,
                f"{num(u['graph_hit_at_1'])} / {num(t['graph_hit_at_1'])}",
                f"{num(un['depth_right'])} / {num(tr['depth_right'])}",
                f"{num(u['not_in_graph'])} / {num(t['not_in_graph'])}",
                f"{num(u['answer_recall'])} / {num(t['answer_recall'])}",
                f"{num(u['mean_nodes'], 1)} / {num(t['mean_nodes'], 1)}",
                f"{num(u['total_ms']['p50'], 0)} / {num(t['total_ms']['p50'], 0)} ms",
            ])
        return out

    header = ["hops", "Hit@1", "depth right", '"not in the graph"', "answer in subgraph", "mean nodes", "p50 per question"]
    return f"""MetaQA dev questions as typed (brackets removed, names linked in the text), `paths` mode, depth
read from each question. Each cell is **zero-shot / trained**: zero-shot uses no MetaQA question
at all; trained uses the relation-path ranker and hop model that `gr-neo4j train-paths` stores. All
of these questions have answers in MetaQA's gold; the graph lacks some of them, so a few are
honestly answered "not in the graph".

The first {z['limit']} questions per hop:

{table(header, rows(z))}

{s['limit']} questions per hop spread over the rest of each dev file (more of its wordings):

{table(header, rows(s))}

{source("metaqa_zero_shot", "metaqa_zero_shot_spread")}"""


def not_in_graph() -> str:
    rows = []
    for name, what in (("metaqa_abstention_untrained", "MetaQA, zero-shot"), ("metaqa_abstention", "MetaQA, trained"), ("movies_abstention", "Movies, zero-shot")):
        r = load(name)
        kinds = r["out_of_graph"]["by_kind"]
        control = r["in_graph_control"]
        rows.append([
            what,
            f"{num(r['out_of_graph']['abstained'])} of {r['out_of_graph']['questions']}",
            " / ".join(num(k["abstained"]) for k in kinds.values()),
            per_hop(control[h]["abstained"] for h in HOPS) if control else "–",
        ])
    kinds = " / ".join(load("metaqa_abstention")["out_of_graph"]["by_kind"])
    return f"""Seeded questions the graph cannot answer ({kinds}), and, as a control, answerable dev
questions after the first 300 per hop. Target: at least 0.90 of the first answered "not in the
graph", at most 0.02 of the control.

{table(["graph", '"not in the graph"', f"by kind ({kinds})", "control abstained (1 / 2 / 3 hops)"], rows)}

{source("metaqa_abstention_untrained", "metaqa_abstention", "movies_abstention")}"""


def time_per_question() -> str:
    t = load("metaqa_latency")
    rows = []
    for row, what in (("untrained", "before `train-paths`"), ("trained", "after `train-paths`")):
        for h in t["hops"]:
            r = t["rows"][row][h]
            b, o = r["median"]["baseline"], r["median"]["ours"]
            rows.append([what, h, f"{num(b['total_ms'], 0)} / {num(o['total_ms'], 0)}", f"{num(b['cypher_ms'], 0)} / {num(o['cypher_ms'], 0)}",
                         f"{num(b['graph_hit_at_1'])} / {num(o['graph_hit_at_1'])}", num(r["ratio"], 2)])
    return f"""p50 time per MetaQA question (embed, link, Cypher, selection) of this revision beside the last
revision before the zero-shot scorer, on one database and one machine: the first {t['limit']} dev
questions per hop, `eval-retrieval --mode paths --predict-hops`, each side run {t['rounds']} times in
alternating order; each cell is the median of the runs' p50, **baseline / now** (target: now at
most {num(t['target']['ratio_at_most'], 2)} × baseline). Untrained, the baseline walks two relations deep for every
question; now the zero-shot scorer ranks paths of one, two and three relations before the fetch,
which walks only the best ones' relations, as deep as they go. Trained, both predict the depth
with the hop model; the baseline walks every relation to it, now the trained ranker ranks the
paths to it before the fetch in the same way.

{table(["", "hops", "p50 ms", "Cypher p50 ms", "Hit@1", "ratio"], rows)}

{source("metaqa_latency")}"""


def movies_graph() -> str:
    m = load("movies_zero_shot")
    a = load("adopt_movies")
    rel_rows = [[rel, str(v["questions"]), num(v["hit_at_1"])] for rel, v in m["by_relation"].items()]
    ours, base = a["ours"], a["baseline"]
    isolation = ""
    if (BENCH / "movies_isolation.json").is_file():
        iso = load("movies_isolation")
        alike = "; ".join(f"{name} ({v['entities']} entities): {v['alike']} of {v['questions']}" for name, v in iso["small"].items())
        isolation = f"""
Beside MetaQA's {iso['large']['entities']:,} entities in the same database, each copy's questions (the
generated ones and a few it cannot answer) retrieve the same nodes, answers and refusals as when it
is alone: {alike}.
"""
    adopt_rows = [
        ["`load neo4j` (the graph as it stands)", str(ours["entities"]), num(ours["adopt_s"], 1), num(ours["readopt_s"], 1),
         "yes" if all(ours["user_graph_unchanged"].values()) else "**no**", f"{num(ours['hit_at_1'], 2)} ({len(ours['questions'])} questions)"],
        ["`load triples` (the same graph exported)", str(base["entities"]), num(base["load_s"], 1), "–", "–",
         f"{num(base['hit_at_1'], 2)} ({len(base['questions'])} questions)"],
    ]
    return f"""Neo4j's Movies graph (Browser's `:play movies`), which has no question set. Written as
{m['triples']} triples and loaded with `load triples`, {m['questions']} generated 1-hop questions
("who directed The Matrix", "when was Tom Hanks born", `~` = asked backwards) are answered zero-shot
with Hit@1 **{num(m['hit_at_1'])}**:

{table(["relation", "questions", "Hit@1"], rel_rows)}

Adopted as it stands (labels, types and properties kept, relationship properties answerable) beside
the same graph exported as triples:

{table(["how", "entities", "load s", "re-run s", "user graph unchanged", "Hit@1"], adopt_rows)}
{isolation}
{source("movies_zero_shot", "adopt_movies", *(["movies_isolation"] if isolation else []))}"""


def path_ranker() -> str:
    t = load("metaqa_train_paths")
    groups = list(t["top1_trained"])
    rows = [[g, str(t["held_out"][g]), num(t["top1_cosine"][g]), num(t["top1_trained"][g]), num(t["top1_planned"][g]), num(t["hop_accuracy"][g])] for g in groups]
    return f"""`train-paths` learns, from a dataset's own questions, which relation path a question means
and how deep to walk. Held-out questions (a fifth of those it reads; "1 in 3" = 1-hop questions
asked with 3 hops): share whose best-ranked path is a gold one.

{table(["questions", "held out", "cosine ranking", "trained ranker", "with path plan", "hop model right"], rows)}

{num(t['seconds'], 0)} s in all; stored answer floor {t['answer_floor']}.

{source("metaqa_train_paths")}"""


def llm_answers() -> str:
    r = load("metaqa_llm_answers")
    rows = []
    for key, what in (("graph_answers", "the graph's own answers (`ask` default)"), ("llm_zero_shot_auto", "SmolLM2, decoding held to the subgraph"), ("llm_zero_shot_free", "SmolLM2, free decoding")):
        v = r[key]
        rows.append([what, per_hop(v["hops"][h]["hit@1"] for h in HOPS), per_hop(v["hops"][h]["f1"] for h in HOPS), num(v["all"]["outside"])])
    h = load("metaqa_answer_head")
    head_rows = [[k, num(v["answer_in_subgraph"]), num(v["head"]["hit_at_1"]), num(v["baseline_most_similar_node"]["hit_at_1"]), num(v["head"]["f1"])] for k, v in h["hops"].items()]
    return f"""The first {r['questions_per_hop']} MetaQA dev questions per hop, retrieved as `ask` retrieves them.
"Outside" is the share of answers naming nothing in the subgraph.

{table(["answered by", "Hit@1 (1 / 2 / 3 hops)", "F1 (1 / 2 / 3 hops)", "outside"], rows)}

The node head (a small scorer over the retrieved subgraph's nodes), trained on
{h['train_per_hop']} questions per hop and tested on {h['test_per_hop']}, beside the node most
similar to the question:

{table(["hops", "answer in subgraph", "node head Hit@1", "most similar node Hit@1", "node head F1"], head_rows)}

{source("metaqa_llm_answers", "metaqa_answer_head")}"""


def training() -> str:
    mp = load("train_explagraphs_label_mpnet_cpu")
    lm = load("train_explagraphs_label_cpu")
    fin = load("train_explagraphs_label_final_cpu")
    gr = load("train_explagraphs_cpu")
    mq = load("train_metaqa_1hop_cpu")

    def label_row(what: str, r: dict) -> list[str]:
        return [what, num(r["trained"]["auto"]["test_accuracy"]), num(r["train"].get("samples_per_s"), 2), num(r["train"].get("seconds", 0) / 60, 0)]

    rows = [
        label_row("label classifier, all-mpnet-base-v2", mp),
        label_row("label classifier, all-MiniLM-L6-v2", lm),
        ["label classifier, all-MiniLM-L6-v2, train + val (`--final`)", num(fin["trained"]["auto"]["test_accuracy"]), "–",
         num(sum(e["train_seconds"] for e in fin["history"]) / 60, 0)],
        ["G-Retriever: GT + frozen SmolLM2-135M", num(gr["g_retriever"]["test_accuracy"]), num(gr["train"]["samples_per_s"], 2), num(gr["train"]["seconds"] / 60, 0)],
        ["SmolLM2-135M zero-shot (textualized graph, no training)", num(mp["zero_shot_llm"]["auto"]["test_accuracy"]), "–", "–"],
        ["majority class", num(mp["majority_class"]["test_accuracy"]), "–", "–"],
    ]
    mq_rows = [
        ["G-Retriever: GT + frozen SmolLM2-135M", num(mq["g_retriever"]["test_hit@1"]), num(mq["g_retriever"]["hallucination_rate"]), num(mq["train"]["seconds"] / 60, 0)],
        ["SmolLM2-135M zero-shot", num(mq["zero_shot_llm"]["test_hit@1"]), num(mq["zero_shot_llm"]["hallucination_rate"]), "–"],
    ]
    sizes = mp["sizes"]
    return f"""ExplaGraphs, the paper's split ({sizes['train']} / {sizes['val']} / {sizes['test']}, seed 42),
test accuracy, on this project's 2-core CPU:

{table(["model", "test accuracy", "samples/s", "training minutes"], rows)}

MetaQA 1-hop, samples retrieved from Neo4j ({mq['sizes']['train']} / {mq['sizes']['val']} / {mq['sizes']['test']}):

{table(["model", "test Hit@1", "answers outside the subgraph", "training minutes"], mq_rows)}

![ExplaGraphs training curves](img/explagraphs_train_curves.png)

{source("train_explagraphs_label_mpnet_cpu", "train_explagraphs_label_cpu", "train_explagraphs_label_final_cpu", "train_explagraphs_cpu", "train_metaqa_1hop_cpu")}"""


ABLATION_ROWS = {
    "llm": "LLM zero-shot (textualized graph)",
    "lora": "LLM + LoRA (textualized graph, no graph token)",
    "frozen": "G-Retriever, LLM frozen (graph token trained)",
    "g_retriever_lora": "G-Retriever + LoRA",
    "g_retriever_lora_no_text": "G-Retriever + LoRA, no textualized graph",
}


def ablation() -> str:
    parts = []
    names = sorted(p.stem for p in BENCH.glob("ablation_*.json"))
    for name in names:
        r = load(name)
        c = r["config"]
        rows = []
        for key, what in ABLATION_ROWS.items():
            row = r["rows"].get(key)
            if row is None:
                continue
            metric = next(k for k in row if k.startswith("test_") and k != "test_answered")
            rows.append([what, num(row[metric]), num(row.get("outside")), num(row.get("train_samples_per_s"), 2),
                         num(row["train_seconds"] / 60, 0) if "train_seconds" in row else "–", str(row.get("epochs_run", "–")),
                         str(row.get("threads", r.get("threads", "–"))) if "train_seconds" in row else "–"])
        if "majority_class" in r:
            baseline = f" Majority class: {num(r['majority_class']['test_accuracy'])}."
            samples = "whole graphs of the TSV"
        else:
            baseline = (f" A node drawn at random from the subgraph's nodes the question does not name: Hit@1 "
                        f"{num(r['random_node']['test_hit@1'])}.") if "random_node" in r else ""
            samples = (f"the subgraphs `ask` retrieves with the trained path ranker for the first dev questions, written by "
                       f"`gr-neo4j retrieve --dataset {r['dataset']} --split dev --limit {sum(r['sizes'].values())} --out FILE`")
        dataset = name.removeprefix("ablation_")
        curves = f"\n\n![Ablation on {dataset}: learning curves](img/{name}.png)" if (ROOT / "docs" / "img" / f"{name}.png").is_file() else ""
        by_command: dict[str, list[str]] = {}
        for key, row in r["rows"].items():
            if "provenance" in row:
                by_command.setdefault(row["provenance"]["command"], []).append(ABLATION_ROWS.get(key, key))
        ran = "".join(f"\n- {', '.join(whats)}: `{c}`" for c, whats in sorted(by_command.items())) if len(by_command) > 1 else ""
        llm = r.get("llm", "SmolLM2-135M-Instruct (the default)")
        parts.append(f"""{r['dataset']} with the LLM {llm}, {r['sizes']['train']} / {r['sizes']['val']} / {r['sizes']['test']} samples ({samples}), decoding held to the
{'labels' if r['dataset'] == 'explagraphs' else "subgraph's node texts"}; LoRA r {c['lora_r']} on {c['lora_targets']}, rates {c['lr']} (LoRA) and
{c['graph_lr']} (GNN, projector), {c['epochs']} epochs at most, {c['minutes']:g} minutes of training per row.{baseline}

{table(["model", "test " + metric.removeprefix("test_"), "answers outside the subgraph", "train samples/s", "minutes (training, validation)", "epochs begun", "threads"], rows)}{curves}

{source(name)}{ran}""")
    return "Each row trained and scored on the same split by `scripts/bench_ablation.py`.\n\n" + "\n\n".join(parts)


def lora_configuration() -> str:
    r = load("tune_lora_explagraphs")
    sched = r["schedule"]
    rows = [[f"`{name}`", str(c["lora_r"]), str(c["lora_alpha"]), ", ".join(c["lora_targets"]), f"{c['lr']:g}", f"{c['samples_trained']:,}",
             per_hop(c["val_loss"]), f"**{num(c['val_accuracy'])}**", num(c["train_samples_per_s"], 2), str(c["threads"])]
            for name, c in r["configs"].items()]
    best_name, best = max(r["configs"].items(), key=lambda kv: kv[1]["val_accuracy"])
    used = load("ablation_explagraphs")["config"]
    same = (best["lora_r"], ",".join(best["lora_targets"]), best["lr"]) == (used["lora_r"], used["lora_targets"], used["lr"])
    verdict = (f"The ablation above trains `{best_name}`, the configuration with the best validation accuracy here." if same else
               f"The best validation accuracy here is `{best_name}`'s; the ablation above trains r {used['lora_r']} on "
               f"{used['lora_targets']} at {used['lr']:g} for {used['epochs']} epochs.")
    curves = "\n\n![LoRA configurations: training curves](img/tune_lora_explagraphs.png)" if (ROOT / "docs" / "img" / "tune_lora_explagraphs.png").is_file() else ""
    return f"""G-Retriever + LoRA on {r['dataset']} ({r['sizes']['train']} training graphs) with {r['llm']}, each adapter configuration
trained under the same schedule ({sched['epochs']} epochs of half cosine, GNN and projector at {sched['graph_lr']:g}) and the same
{sched['minutes']:g}-minute budget, then scored on the {r['sizes']['val']} validation graphs (never the test split) with decoding
held to the labels. {verdict}

{table(["configuration", "r", "alpha", "modules", "LoRA rate", "samples trained", "validation loss per epoch", "validation accuracy",
        "train samples/s", "threads"], rows)}{curves}

{source("tune_lora_explagraphs")}"""


def embedding_backends() -> str:
    e = load("embed_backends")
    rows = [["torch", num(e["baseline"]["median_texts_per_s"], 0), "1.00×", "–", "–", "–"]]
    for backend in ("onnx", "onnx-int8"):
        b = e[backend]
        kb = b["cosine_to_torch_kb"]
        rows.append([f"`{backend}`", num(b["median_texts_per_s"], 0), f"{b['speedup_vs_torch']:.2f}×", f"{kb['mean']:.4f} / {kb['min']:.4f}",
                     num(b["retrieval_vs_torch"]["entity_top3_same_set"]), num(b["retrieval_vs_torch"]["best_relation_same"])])
    return f"""all-MiniLM-L6-v2 over MetaQA's {e['texts']['entities']:,} KB texts, the backends taking turns
(median of rounds); `onnx` (float32) is the CPU default because it gives torch's vectors.

{table(["backend", "texts/s", "speed-up", "cosine to torch: mean / min", "same 3 nearest entities", "same nearest relation"], rows)}

{source("embed_backends")}"""


def loading() -> str:
    r = load("load_backends")
    rows = []
    for run in r["runs"]:
        full, reload = run["full_load"], run["reload"]
        rows.append([f"`{run['embedder_backend']}`", num(full["wall_s"], 0), num(full["phases_s"]["embed"], 0), num(full["embed_texts_per_s"], 0),
                     num(reload["wall_s"], 1), "yes" if reload["counts_unchanged"] else "**no**", num(full["peak_rss_mb"], 0)])
    base = r["runs"][0]["per_row_baseline"]
    full = r["runs"][0]["full_load"]
    return f"""The whole MetaQA KB ({full['triples']:,} triples, {full['entities']:,} entities) and its {full['questions']:,} dev
questions into a fresh database, then the same load again (nothing to write):

{table(["embedder backend", "full load s", "embed s", "texts/s", "re-run s", "re-run wrote nothing", "client peak RSS MB"], rows)}

Batched writes against one `MERGE` per triple ({base['triples']:,} triples): {num(base['triples_per_s'], 1)} triples/s per
row, {num(base['speedup_of_batched_writes'], 1)}× faster batched.

{source("load_backends")}"""


def scale() -> str:
    s = load("scale")
    rows = []
    for size in s["sizes"]:
        ret = size["retrieval"]["neo4j"]
        rows.append([f"{size['scale']:g}×", f"{size['generated']['entities']:,}", f"{size['generated']['triples']:,}", num(size["load"]["wall_s"], 0),
                     num(size["after_load"]["store_mb"], 0),
                     per_hop((ret[f"paths/{h}"]["total_ms"]["p50"] for h in HOPS), 0),
                     per_hop(ret[f"paths/{h}"]["answer_recall"] for h in HOPS)])
    return f"""MetaQA-like graphs generated at multiples of MetaQA's size (deterministic hash embedder: recall is a
plumbing figure, not a semantic one), {s['per_hop']} questions per hop, `paths` mode:

{table(["size", "entities", "triples", "load s", "store MB", "p50 ms (1 / 2 / 3 hops)", "answer recall (1 / 2 / 3 hops)"], rows)}

![Scale](img/scale.png)

{source("scale")}"""


def cold_start() -> str:
    c = load("cold_start_cpu")
    # each command asks the same question; what differs is the options after it
    rows = [[f"`{c['commands'][k].partition(c['question'] + chr(39))[2].strip()}`", num(c["baseline"]["median_s"].get(k), 1),
             num(c["median_s"][k], 1), num(c["target_s"].get(k), 0)] for k in c["median_s"]]
    return f"""A new process per question (`gr-neo4j ask '{c['question']}'` with the options below), full
MetaQA KB (seconds, median): the baseline (`--baseline REF`, the JSON names it) is the revision
before imports were made lazy and the models cached.

{table(["options", "baseline s", "now s", "target s"], rows)}

{source("cold_start_cpu")}"""


def serving() -> str:
    s = load("serve_cpu")
    last = max(level["round"] for level in s["levels"])
    rows = [[f"`{lv['endpoint']}`", str(lv["clients"]), str(lv["requests"]), str(lv["errors"]), num(lv["latency_ms"]["p50"], 0), num(lv["latency_ms"]["p95"], 0),
             num(lv["throughput_rps"], 2)] for lv in s["levels"] if lv["round"] == last]
    cold = s["baseline_cold_cli_ask"]["latency_ms"]["p50"]
    return f"""`gr-neo4j serve` over {s['data']['triples']:,} MetaQA triples, concurrent clients (the warm round), beside a
cold `gr-neo4j ask` per question (p50 {num(cold / 1000, 1)} s):

{table(["endpoint", "clients", "requests", "errors", "p50 ms", "p95 ms", "requests/s"], rows)}

{source("serve_cpu")}"""


def integrations() -> str:
    g = load("integrations_metaqa")
    names = {"retrieve": "`Retriever.retrieve` (baseline)", "pyg": "PyG `RAGQueryLoader.query`",
             "graphrag": "neo4j-graphrag `GRetrieverRetriever.search`", "langchain": "LangChain `GRetrieverLangChain.invoke`"}
    rows = [[what, num(g["latency_ms"][k]["p50"], 1), num(g["latency_ms"][k]["p95"], 1),
             num(g["overhead_ms_p50"].get(k), 2) if k != "retrieve" else "–"] for k, what in names.items()]
    return f"""The same {g['n']} MetaQA questions through gr-neo4j's own retrieval and each integration on one shared
`Retriever` (nothing recorded); overhead is the median per-question difference from the baseline
(target under {num(g['target_overhead_ms_p50'], 0)} ms). PyG's loader gave the baseline's subgraph (same node keys, same order)
for {g['pyg_same_subgraph']} of {g['n']} questions.

{table(["path", "p50 ms", "p95 ms", "overhead p50 ms"], rows)}

{source("integrations_metaqa")}"""


SECTIONS: list[tuple[str, Callable[[], str]]] = [
    ("Graph answers", graph_answers),
    ("Not in the graph", not_in_graph),
    *([("Time per question", time_per_question)] if (BENCH / "metaqa_latency.json").is_file() else []),
    ("Movies graph", movies_graph),
    ("Path ranker training", path_ranker),
    ("LLM answers", llm_answers),
    ("Training", training),
    *([("Ablation", ablation)] if any(BENCH.glob("ablation_*.json")) else []),
    *([("LoRA configuration", lora_configuration)] if (BENCH / "tune_lora_explagraphs.json").is_file() else []),
    ("Embedding backends", embedding_backends),
    ("Loading", loading),
    ("Scale", scale),
    ("Cold start", cold_start),
    ("Serving", serving),
    *([("Integrations", integrations)] if (BENCH / "integrations_metaqa.json").is_file() else []),
]


def benchmarks_page() -> str:
    parts = [
        "# Benchmarks",
        "",
        "Every table here is rendered by `python scripts/render_docs.py` from the JSON a benchmark wrote under",
        "`docs/bench/`; the line under each table names that JSON and the command, date, machine and revision",
        "it records. Run the command to make the figure again; a test fails when this page differs from what",
        "the JSON files say. Unless a line says otherwise, the machine is a 2-core CPU with 24 GB and no GPU.",
    ]
    for title, render in SECTIONS:
        parts += ["", f"## {title}", "", render()]
    return "\n".join(parts) + "\n"


def headline() -> str:
    z, s = load("metaqa_zero_shot"), load("metaqa_abstention_untrained")
    t, m, a = load("metaqa_abstention"), load("movies_zero_shot"), load("adopt_movies")
    mp = load("train_explagraphs_label_mpnet_cpu")
    am, ae = load("ablation_metaqa"), load("ablation_explagraphs")

    def hit(key: str | None) -> str:
        return per_hop((z["hops"][h][key] if key else z["hops"][h])["modes"]["paths"]["graph_hit_at_1"] for h in HOPS)

    def p50(key: str | None) -> str:
        return per_hop(((z["hops"][h][key] if key else z["hops"][h])["modes"]["paths"]["total_ms"]["p50"] for h in HOPS), 0)

    rows = [
        ["MetaQA Hit@1, 1 / 2 / 3 hops, before any training", hit("untrained"), "[graph answers](docs/benchmarks.md#graph-answers)"],
        ["… after `train-paths`", hit(None), "[graph answers](docs/benchmarks.md#graph-answers)"],
        ["MetaQA p50 per question, 1 / 2 / 3 hops", f"{p50('untrained')} ms untrained, {p50(None)} ms trained", "[graph answers](docs/benchmarks.md#graph-answers)"],
        ['Questions the graph cannot answer, "not in the graph"', f"{num(s['out_of_graph']['abstained'])} zero-shot, {num(t['out_of_graph']['abstained'])} trained",
         "[not in the graph](docs/benchmarks.md#not-in-the-graph)"],
        ["Neo4j's Movies graph, no questions, 1-hop Hit@1", num(m["hit_at_1"]), "[movies graph](docs/benchmarks.md#movies-graph)"],
        ["Movies adopted as it stands (`load neo4j`), user graph unchanged", f"{num(a['ours']['adopt_s'], 1)} s, Hit@1 {num(a['ours']['hit_at_1'], 2)}",
         "[movies graph](docs/benchmarks.md#movies-graph)"],
        ["G-Retriever + LoRA, SmolLM2-135M: MetaQA 1-hop Hit@1 / ExplaGraphs accuracy (LoRA without the graph token)",
         (f"{num(am['rows']['g_retriever_lora']['test_hit@1'])} / {num(ae['rows']['g_retriever_lora']['test_accuracy'])} "
          f"({num(am['rows']['lora']['test_hit@1'])} / {num(ae['rows']['lora']['test_accuracy'])})"), "[ablation](docs/benchmarks.md#ablation)"],
        ["ExplaGraphs test accuracy (label classifier; majority class)",
         f"{num(mp['trained']['auto']['test_accuracy'])} ({num(mp['majority_class']['test_accuracy'])})", "[training](docs/benchmarks.md#training)"],
    ]
    return table(["", "figure", "details and command"], rows)


def render_readme(text: str) -> str:
    start, end = text.index(HEADLINE_START) + len(HEADLINE_START), text.index(HEADLINE_END)
    return text[:start] + "\n" + headline() + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Only compare; exit 1 if a page differs from its rendering.")
    args = parser.parse_args(argv)
    wanted = {PAGE: benchmarks_page(), README: render_readme(README.read_text())}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from its rendering: run `python scripts/render_docs.py`", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
