"""Hidden-variable reranking of a dependency parser's 16-best lists
================================================================

The hidden-variable reranker (Koo and Collins 2005) rescores the k best trees of a base
parser with a log-linear model in which every word of a candidate tree carries a hidden
value, a refinement of its POS tag (NOUN_1 ... NOUN_5) that nobody annotates; the values
interact along the candidate's head-modifier links and are summed out exactly by belief
propagation, and training makes them specialise.

The whole pipeline, small:

1. a first-order projective dependency parser (``DependencyParser``: Eisner's algorithm,
   gold UPOS, here an averaged perceptron, 5 epochs) trained on the first 1,000 sentences
   of UD English EWT train;
2. its exact 16-best lists (``task.structure().kbest``) for the next 1,000 training sentences, which
   the parser never saw (so the reranker trains on lists like the ones it will meet; the
   user guide jackknifes instead), and for the first 500 sentences of EWT dev;
3. two rerankers on the training lists (``Estimator(task="rerank")``, the ``rerank`` task's
   in-memory form ``(words, pos, candidates)``): the plain log-linear reranker
   (``domain="no-hidden"``) and the hidden-variable one (``domain="pos"``, head graph), with
   the SGD settings of the user guide's experiment (eta0 = 0.2, initial noise 0.1, 15
   epochs).

It prints UAS on the dev slice (punctuation excluded) of the base parser's 1-best, of each
reranker's choice and of the oracle (the best candidate in each list), with a sign test
over sentences against the base parser (sentences whose chosen tree has more / fewer
correct heads than the 1-best).  Here the hidden-variable reranker gains 1.1 UAS points
(p = 0.003) and the plain one 0.7, with as many sentences worse as better; the oracle
shows how much the 16-best lists leave on the table.  The user guide's full run (a parser
trained by the structural SVM on all of EWT train, jackknifed lists, all of EWT dev)
gains 0.97 points with the pos/head model (p = 5e-7) and 0.63 without hidden values.

Reads UD English EWT from ``$LATENTSTRUCT_DATA`` (default ``../shared/data``).  Run it
(about 20 s on one core; seeded, so the output is always the same)::

    python examples/hidden_reranking.py

Expected output::

    base parser trained on 1000 EWT sentences; 16-best lists for 1000 held-out
    training sentences and 500 dev sentences

    dev slice, 6637 scored tokens     UAS   sentences better/worse  sign test p
    base parser (1-best)            79.58
    reranker, no hidden values      80.25                  100/105         0.78
    reranker, hidden pos/head       80.70                   112/71        0.003
    oracle (best of 16)             87.28
"""

from latentstruct import DependencyParser, Estimator
from latentstruct.data.paths import dataset_path
from latentstruct.data.readers import read_conllu
from latentstruct.significance import sign_test

K = 16
train = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu"))
dev = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu"))[:500]
parser_part, rerank_part = train[:1000], train[1000:2000]


def parser_input(sentences):
    """(word, POS) pairs and gold (head, relation) pairs, as DependencyParser takes them."""
    return ([list(zip(s.words, s.upos)) for s in sentences],
            [list(zip(s.heads, s.deprels)) for s in sentences])


# %%
# 1. The base parser.
X, y = parser_input(parser_part)
parser = DependencyParser(learner="perceptron", max_iter=5, random_state=0).fit(X, y)


# %%
# 2. k-best lists: one ``(words, pos, candidates)`` per sentence, each candidate
#    ``(heads, relations, base score)``, best first.
def kbest_lists(sentences):
    task, coef = parser.task_, parser.learner_.coef_
    X, gold = parser_input(sentences)
    features = task.featurize(task.make_dataset(X))
    lists = [(list(s.words), list(s.upos),
              [(heads.tolist(), list(rels), float(score)) for heads, rels, score in
               task.structure().kbest(features[i], coef, K)])
             for i, s in enumerate(sentences)]
    return lists, gold


train_lists, train_gold = kbest_lists(rerank_part)
dev_lists, dev_gold = kbest_lists(dev)
print(f"base parser trained on {len(parser_part)} EWT sentences; {K}-best lists for "
      f"{len(train_lists)} held-out\ntraining sentences and {len(dev_lists)} dev sentences")

# %%
# 3. Rerankers, trained on the held-out training lists and scored on the dev lists.
rows = {}
for name, domain in (("reranker, no hidden values", "no-hidden"),
                     ("reranker, hidden pos/head", "pos")):
    reranker = Estimator(task="rerank", domain=domain, graph="head", eta0=0.2, init_noise=0.1,
                         n_epochs=15, tol=None, random_state=0).fit(train_lists, train_gold)
    targets = reranker.task_.encode_targets(reranker.task_.make_dataset(dev_lists,
                                                                       dev_gold).targets)
    chosen = reranker.predict(dev_lists)  # the index of the chosen candidate per sentence
    rows[name] = (reranker.task_.evaluate(targets, chosen), chosen)

metrics, _ = next(iter(rows.values()))
print(f"\n{'dev slice, ' + str(metrics['n_tokens_scored']) + ' scored tokens':<30}"
      f"{'UAS':>7}{'sentences better/worse':>25}{'sign test p':>13}")
print(f"{'base parser (1-best)':<30}{100 * metrics['base_uas']:>7.2f}")
for name, (m, chosen) in rows.items():
    per_sentence = [t.correct_heads[p] for t, p in zip(targets, chosen)]
    test = sign_test(per_sentence, [t.correct_heads[0] for t in targets])
    print(f"{name:<30}{100 * m['uas']:>7.2f}{f'{test.n_better}/{test.n_worse}':>25}"
          f"{test.p_value:>13.2g}")
print(f"{'oracle (best of ' + str(K) + ')':<30}{100 * metrics['oracle_uas']:>7.2f}")
