"""`qlabench advise`: which GDN kernel for a model, TP degree, workload and sequence mix, from recorded rows.

    question.py  the question (model, TP, workload, cases, gate regime) parsed from the command line
    rows.py      the rows of one case's kernel problem; one library version per backend
    ranking.py   one entry per backend: time, speedup against the current choice, noise, correctness
    caveats.py   what changes the answer (gate, version, auto CP, mixed runs, ties), each from rows
    first_call.py each backend's first calls in a fresh process, from `qlabench cold-start`'s records
    suite.py     a suite measuring exactly what the answer is missing
    answer.py    all of it for every case
"""

from qlabench.analyze.advise.answer import Answer, CaseAnswer, advise
from qlabench.analyze.advise.question import Question, make_question

__all__ = ["Answer", "CaseAnswer", "Question", "advise", "make_question"]
