"""The labelled detection corpus: a realistic layout, scripted trajectories, a sandbox.

``layout`` builds the files an agent could reach (operator trees, a benchmark checkout,
a SWE-bench-style repository, a home with leftovers); ``scenarios`` lists labelled
trajectories as commands; ``sandbox`` runs each trajectory's commands in a throwaway
bubblewrap sandbox holding the layout, so every tool result in the corpus is what the
command really printed; ``generate`` writes ``corpus.jsonl``.
"""
