"""The names researchers script against (issue 22, part 7) import and work as documented.

Each listed name is imported from the module the README names and called once; a rename
or signature change that breaks a script breaks this test first.
"""

from __future__ import annotations

import hashlib

from redaction_pressure import (
    corpus,
    identity,
    knobs,
    policies,
    prompt,
    reward,
    scoring_pool,
    splits,
    taskset,
)

SECRET = hashlib.sha256(b"stable api test secret").hexdigest()


def test_every_listed_name_imports_and_works() -> None:
    # corpus
    seed = splits.public_task_seed("dev", 3)
    key = corpus.public_evaluation_key(seed)
    largest = knobs.CorpusKnobs(
        secret_families=knobs.Range(low=11, high=11),
        decoy_kinds=knobs.Range(low=14, high=14),
        decoys_per_record=knobs.Range(low=5, high=5),
        example_records=80,
        evaluation_records=64,
    )
    task = corpus.generate_task(seed, key, largest)
    assert isinstance(corpus.CORPUS_VERSION, str) and task.corpus_version == corpus.CORPUS_VERSION
    assert len(task.examples) == 80 and len(task.evaluation) == 64
    assert len(task.digest()) == 64
    assert corpus.generate_task(seed, key, knobs.preset("hard")).digest() != task.digest()
    # splits
    assert splits.private_task_seed(SECRET, 0) >= 1 << 63
    assert len(splits.private_evaluation_key(SECRET, 0)) == 32
    seeds = splits.SplitSeeds("private_eval", environ={splits.PRIVATE_SEED_ENV: SECRET})
    assert seeds.seed(0) == splits.private_task_seed(SECRET, 0)
    # prompt
    assert "Output contract" in prompt.render_prompt(task)
    # policies
    for name in ("oracle", "generic_scanner", "redact_everything"):
        assert policies.POLICIES[name] is getattr(policies, name)
    # reward
    result = reward.score_reply(policies.oracle(task), task.evaluation)
    assert (result.reward, result.recall, result.precision, result.clean) == (1.0, 1.0, 1.0, True)
    assert result.matches > 0
    assert reward.score_reply(policies.redact_everything(task), task.evaluation).reward < 0.5
    assert reward.score_reply(policies.generic_scanner(task), task.evaluation).valid
    # identity (the preset name is optional)
    split = splits.SplitSeeds("dev").identity
    assert identity.environment_identity(split, largest).corpus_knobs == largest
    assert identity.environment_identity(split, largest, preset="hard").preset == "hard"
    # taskset
    dev = splits.SplitSeeds("dev")
    ident = identity.environment_identity(dev.identity, knobs.preset("standard"))
    data = taskset.build_task_data(dev, 3, ident)
    assert data.index == 3 and data.environment == ident
    # scoring pool
    pool = scoring_pool.ScoringPool(workers=1)
    try:
        pooled = pool.score(policies.oracle(task), task.evaluation)
    finally:
        pool.close()
    assert pooled.reward == 1.0
