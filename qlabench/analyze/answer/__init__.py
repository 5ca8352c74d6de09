"""The answer to "which GDN kernel for my model, TP degree, workload and sequences", from recorded rows: the
floor below the views that `advise`, the site's rankings, the study page and the docs' advise block all rank
with, so no two of them can differ. It reads rows through the evidence layer and draws on the kit only.

    question.py    the question (model, TP, workload, cases, gate regime) parsed from the command line
    rows.py        the rows of one case's kernel problem; one library version per backend
    ranking.py     one entry per backend: time, speedup against the current choice, noise, correctness
    caveats.py     what changes the answer (unmeasured candidates, gate, version, ties, mixed runs), from rows
    auto_choice.py a library's own CP decision against its pinned settings
    checked.py     how far each ranked time was checked; tuning.py whether it was tuned for its own point
    calls.py       the library call of each ranked backend; engines.py how vLLM and SGLang select it
    first_call.py  each backend's first calls in a fresh process, from `qlabench cold-start`'s records
    answer.py      all of it per case (`answer_case`, `answer_cases`) and per question (`answer_question`)
"""

from qlabench.analyze.answer.answer import Answer, CaseAnswer, answer_case, answer_cases, answer_question
from qlabench.analyze.answer.question import PUBLISHED, WORKLOAD_MODES, Case, Question, make_question

__all__ = ["PUBLISHED", "WORKLOAD_MODES", "Answer", "Case", "CaseAnswer", "Question", "answer_case", "answer_cases",
           "answer_question", "make_question"]
