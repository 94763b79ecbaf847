"""Koo & Collins (2005) Table 1, dependency version: hidden-variable rerankers of k-best lists.

Pipeline, for UD EWT (train -> dev) and for the PTB WSJ sample (.dp files, wsj_0001-0119
-> wsj_0120-0142):

1. the base parser: ``latentstruct train dep`` (first-order, StructuredSVM, gold POS);
2. k-best lists (k = 16): jackknifed on the training data (``latentstruct kbest --folds``),
   and from the full parser on the evaluation data;
3. the training lists are cut into a reranker-training part (first 85%) and a tuning part
   (last 15%, used only for the mixture weights);
4. rerankers: no hidden values (the clean ablation) and the hidden-variable models
   (domain × graph); each trained on the training part;
5. mixtures (§4.3), weights tuned on the tuning part only:
   - MIX-trio: the three models of the paper's final mixture (supersense/sibling,
     lexical/sibling, highest-nonterminal ≈ relation/head) and the base score;
   - MIX-trio+no-hidden: the same plus the no-hidden reranker;
   - MIX (primary): the paper's selection protocol (§5: "various mixtures of the eight
     models ... testing the accuracy of each mixture on the secondary development set"):
     all eight hidden models and the no-hidden reranker, with the components and weights
     chosen by coordinate ascent on the tuning part (a weight of 0 drops a component).
     The trio was the paper's outcome of that protocol for a PCFG; which models serve a
     dependency reranker is for the tuning split to say, not the evaluation data.
6. every system is scored on the evaluation data (UAS, LAS), with per-sentence sign tests
   (footnote 4) against the base parser and the no-hidden reranker;
7. analysis (§6.3): what the hidden values of frequent POS tags specialise in, and one
   tree drawn with its hidden values.

Writes results/hidden_reranking.{json,md,png} and results/hidden_reranking_tree.png.
Intermediate files (models, lists) go to --work-dir and are reused when present.

    python experiments/hidden_reranking.py            # both corpora, ~N minutes (see README)
    python experiments/hidden_reranking.py --corpus ptb
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from latentstruct.cli import main as cli
from latentstruct.data.dependency.kbest import read_kbest
from latentstruct.data.paths import dataset_path
from latentstruct.learners.probabilistic.mixture import tune_mixture_weights
from latentstruct.learners.probabilistic.reranker import HiddenVariableReranker
from latentstruct.significance import sign_test
from latentstruct.tasks.rerank import RerankTask, kbest_dataset

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"

# (name, domain, graph): the paper's eight hidden-variable models (4 domains × 2 graphs, §5)
HIDDEN_MODELS = [(f"{d}/{g}", d, g) for d in ("pos", "relation", "lexical", "supersense")
                 for g in ("head", "sibling")]
# the paper's final mixture: supersense+sibling, lexical+sibling, highest-NT(relation)+head
MIX_TRIO = ["supersense/sibling", "lexical/sibling", "relation/head"]


def corpora():
    ewt = dataset_path("ud_english_ewt")
    ptb = dataset_path("ptb_wsj_sample", "dependency")
    return {
        "ewt": {"train": ewt / "en_ewt-ud-train.conllu", "eval": ewt / "en_ewt-ud-dev.conllu",
                "eval_name": "EWT dev", "dep_options": [], "eval_options": []},
        "ptb": {"train": ptb, "eval": ptb, "eval_name": "PTB sample wsj_0120-0142",
                "dep_options": ["ptb_split=auto"], "eval_options": []},
    }


def run(argv):
    print("$ latentstruct " + " ".join(argv), file=sys.stderr)
    code = cli(argv)
    if code != 0:
        raise SystemExit(f"latentstruct {' '.join(argv)} failed with exit code {code}")


def build_lists(name, spec, work: Path, k: int, folds: int, dep_options) -> dict:
    """Train the base parser and write its k-best lists (cached in ``work``)."""
    model = work / f"{name}_dep.model"
    train_lists = work / f"{name}_train_k{k}_f{folds}.kbest"
    eval_lists = work / f"{name}_eval_k{k}.kbest"
    opts = [a for o in spec["dep_options"] + dep_options for a in ("--option", o)]
    timing = {}
    if not model.exists():
        t0 = time.perf_counter()
        run(["train", "dep", "--train", str(spec["train"]), "--model", str(model), *opts])
        timing["parser_train_s"] = time.perf_counter() - t0
    if not eval_lists.exists():
        eval_opts = [a for o in spec["eval_options"] for a in ("--option", o)]
        t0 = time.perf_counter()
        run(["kbest", "--model", str(model), "--input", str(spec["eval"]), "--output",
             str(eval_lists), "-k", str(k), *eval_opts])
        timing["eval_lists_s"] = time.perf_counter() - t0
    if not train_lists.exists():
        t0 = time.perf_counter()
        run(["kbest", "--model", str(model), "--input", str(spec["train"]), "--output",
             str(train_lists), "-k", str(k), "--folds", str(folds)])
        timing["jackknife_lists_s"] = time.perf_counter() - t0
    return {"model": model, "train_lists": train_lists, "eval_lists": eval_lists,
            "timing": timing}


def per_sentence(targets, choice) -> np.ndarray:
    """Per-sentence UAS (fraction of scored tokens with the right head) of chosen candidates."""
    return np.array([t.correct_heads[c] / t.n_scored if t.n_scored else 1.0
                     for t, c in zip(targets, choice)])


def fit_reranker(domain, graph, train, tune, evals, args):
    task = RerankTask(domain=domain, graph=graph)
    task.fit(train)
    learner = HiddenVariableReranker(structure=task, n_epochs=args.epochs, random_state=args.seed,
                                     eta0=args.eta0, init_noise=args.init_noise, progress=False)
    t0 = time.perf_counter()
    learner.fit(task.featurize(train), task.encode_targets(train.targets))
    fit_s = time.perf_counter() - t0
    out = {"fit_s": fit_s, "n_iter": learner.n_iter_, "loss_curve": list(learner.loss_curve_),
           "task": task, "learner": learner}
    for split, data in (("tune", tune), ("eval", evals)):
        X = task.featurize(data)
        out[f"{split}_logp"] = learner.predict_log_proba(X)
    return out


def one_corpus(name, spec, args, work: Path) -> dict:
    lists = build_lists(name, spec, work, args.k, args.folds, args.dep_option or [])
    header, train_sents = read_kbest(lists["train_lists"])
    _, eval_sents = read_kbest(lists["eval_lists"])
    n_tune = int(round(len(train_sents) * args.tune_fraction))
    train = kbest_dataset(header, train_sents[: len(train_sents) - n_tune], lists["train_lists"])
    tune = kbest_dataset(header, train_sents[len(train_sents) - n_tune:], lists["train_lists"])
    evals = kbest_dataset(header, eval_sents, lists["eval_lists"])
    probe = RerankTask().fit(train)
    tune_t = probe.encode_targets(tune.targets)
    eval_t = probe.encode_targets(evals.targets)
    base_tune = [np.array([c.score for c in s.candidates]) for s in tune.records]
    base_eval = [np.array([c.score for c in s.candidates]) for s in evals.records]

    systems, choices = {}, {}
    choices["base"] = [0] * len(eval_t)
    choices["oracle"] = [int(t.correct_heads.argmax()) for t in eval_t]
    models = {}
    for mname, domain, graph in [("no-hidden", "no-hidden", "head"), *HIDDEN_MODELS]:
        if args.models and mname not in args.models and mname != "no-hidden":
            continue
        print(f"[{name}] reranker {mname}", file=sys.stderr)
        models[mname] = fit_reranker(domain, graph, train, tune, evals, args)
        choices[mname] = [int(np.argmax(lp)) for lp in models[mname]["eval_logp"]]

    def mixture(names):
        mix = tune_mixture_weights([models[m]["tune_logp"] for m in names], base_tune, tune_t,
                                   probe.evaluate, random_state=args.seed)
        return mix, mix.predict([models[m]["eval_logp"] for m in names], base_eval)

    trio = [m for m in MIX_TRIO if m in models]
    all_names = [m for m, _, _ in HIDDEN_MODELS if m in models] + ["no-hidden"]
    mix_t, choices["MIX-trio"] = mixture(trio)
    mix_tn, choices["MIX-trio+no-hidden"] = mixture(trio + ["no-hidden"])
    mix, choices["MIX"] = mixture(all_names)
    for sname, choice in choices.items():
        metrics = probe.evaluate(eval_t, choice)
        systems[sname] = {"uas": metrics["uas"], "las": metrics["las"]}
        if sname in models:
            systems[sname]["fit_s"] = round(models[sname]["fit_s"], 1)
            systems[sname]["epochs"] = models[sname]["n_iter"]
    ps = {s: per_sentence(eval_t, c) for s, c in choices.items()}
    tests = {}
    for sname in choices:
        if sname in ("base", "oracle"):
            continue
        tests[f"{sname} vs base"] = sign_test(ps[sname], ps["base"]).to_json()
        if sname != "no-hidden":
            tests[f"{sname} vs no-hidden"] = sign_test(ps[sname], ps["no-hidden"]).to_json()
    analysis = hidden_analysis(models.get("pos/head"), evals) if "pos/head" in models else None
    return {"corpus": spec["eval_name"], "k": args.k, "folds": args.folds,
            "n_train_lists": len(train), "n_tune_lists": len(tune), "n_eval": len(evals),
            "pos": header.pos, "parser_id": header.parser_id, "timing": lists["timing"],
            "systems": systems, "sign_tests": tests,
            "mix_weights": {"MIX-trio": dict(zip(trio + ["base"], mix_t.all_weights.tolist())),
                            "MIX-trio+no-hidden": dict(zip(trio + ["no-hidden", "base"],
                                                           mix_tn.all_weights.tolist())),
                            "MIX": dict(zip(all_names + ["base"], mix.all_weights.tolist()))},
            "mix_tuning_uas": {"MIX-trio": mix_t.tuning_score,
                               "MIX-trio+no-hidden": mix_tn.tuning_score,
                               "MIX": mix.tuning_score},
            "analysis": analysis}


def hidden_analysis(model, evals, top_tags=("NOUN", "VERB", "ADJ", "ADP", "NN", "VB", "IN"),
                    top_words=6) -> dict:
    """§6.3: for frequent POS tags, the words each hidden sub-value is decoded for (h*)."""
    task, learner = model["task"], model["learner"]
    X = task.featurize(evals)
    chosen = learner.predict(X)
    hidden = learner.decode_hidden(X)
    n_sub = task.n_sub_values()
    table = defaultdict(Counter)
    example = None
    for sent, j, h in zip(evals.records, chosen, hidden):
        tags = sent.upos if sent.upos[0] != "_" else sent.xpos
        for word, tag, v in zip(sent.words, tags, h.structure):
            table[(tag, int(v) % n_sub)][word.lower()] += 1
        if example is None and 8 <= len(sent) <= 12 and sent.words[-1] in (".", "?", "!"):
            example = {"words": list(sent.words), "heads": list(sent.candidates[j].heads),
                       "deprels": list(sent.candidates[j].deprels),
                       "hidden": [f"{t}_{int(v) % n_sub + 1}" for t, v in zip(tags, h.structure)]}
    out = {"example": example} if example else {}
    for tag in top_tags:
        rows = {f"{tag}_{s + 1}": [w for w, _ in table[(tag, s)].most_common(top_words)]
                for s in range(n_sub) if table[(tag, s)]}
        if rows:
            out[tag] = rows
    return out


def markdown(results: dict, command: str) -> str:
    lines = ["# Hidden-variable reranking (Koo & Collins 2005), dependency version", "",
             f"Command: `{command}`", ""]
    for name, r in results.items():
        lines += [f"## {r['corpus']} ({r['n_eval']} sentences; k = {r['k']}, "
                  f"{r['folds']}-fold jackknifed training lists, {r['pos']} POS)", "",
                  "| system | UAS | LAS | vs base (p) | vs no-hidden (p) |", "|---|---|---|---|---|"]
        for s, m in r["systems"].items():
            vb = r["sign_tests"].get(f"{s} vs base")
            vn = r["sign_tests"].get(f"{s} vs no-hidden")
            fmt = (lambda t: "" if t is None else
                   f"+{t['better']}/−{t['worse']} ({t['p_value']:.2g})")
            las = "" if m["las"] is None else f"{100 * m['las']:.2f}"
            lines.append(f"| {s} | {100 * m['uas']:.2f} | {las} | {fmt(vb)} | {fmt(vn)} |")
        lines += ["", f"Mixture weights (tuned on {r['n_tune_lists']} held-out training lists): "
                  f"`{json.dumps(r['mix_weights'])}`", "",
                  f"Mixture UAS on the tuning part: `{json.dumps(r.get('mix_tuning_uas'))}`", ""]
        if r.get("analysis"):
            lines += ["Hidden values of frequent POS tags (pos/head model, decoded h*):", ""]
            for tag, rows in r["analysis"].items():
                if tag == "example":
                    continue
                for sub, words in rows.items():
                    lines.append(f"- {sub}: {', '.join(words)}")
            lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", choices=["ewt", "ptb", "both"], default="both")
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--tune-fraction", type=float, default=0.15)
    # chosen on the tuning split (pos/head, 15 epochs): see the README
    p.add_argument("--eta0", type=float, default=0.2)
    p.add_argument("--init-noise", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--models", nargs="*", help="hidden models to run (default: all)")
    p.add_argument("--dep-option", action="append", help="extra --option for train dep")
    p.add_argument("--work-dir", default=os.environ.get("TMPDIR", "/tmp") + "/hidden_reranking")
    args = p.parse_args()
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    specs = corpora()
    names = ["ewt", "ptb"] if args.corpus == "both" else [args.corpus]
    results = {}
    t0 = time.perf_counter()
    for name in names:
        results[name] = one_corpus(name, specs[name], args, work)
    command = "python experiments/hidden_reranking.py " + " ".join(sys.argv[1:])
    payload = {"command": command, "seconds": round(time.perf_counter() - t0, 1),
               "results": results}
    stem = "hidden_reranking" if args.corpus == "both" else f"hidden_reranking_{args.corpus}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(results, command) + "\n")
    print(markdown(results, command))
    draw(results)


def draw(results: dict) -> None:
    """The bar chart of every corpus with results on disk, and this run's example trees."""
    from latentstruct.plotting import draw_dependency_tree, draw_system_scores

    for name, r in results.items():
        ex = (r.get("analysis") or {}).get("example")
        if ex:
            draw_dependency_tree(ex["words"], ex["heads"], RESULTS / f"hidden_reranking_tree_{name}.png",
                                 node_labels=ex["hidden"],
                                 arc_labels=None if set(ex["deprels"]) == {"_"} else ex["deprels"],
                                 title=f"{r['corpus']}: reranked tree and decoded hidden values "
                                       f"h* (pos/head model)")
    panels = {}
    for name in ("ewt", "ptb"):
        f = RESULTS / f"hidden_reranking_{name}.json"
        if f.exists():
            r = json.loads(f.read_text())["results"][name]
            panels[f"{r['corpus']} (k={r['k']})"] = {
                s: 100 * m["uas"] for s, m in r["systems"].items() if s != "oracle"}
    if panels:
        draw_system_scores(panels, RESULTS / "hidden_reranking.png",
                           title="Reranking k-best dependency trees: UAS by system")


if __name__ == "__main__":
    main()
