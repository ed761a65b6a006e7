"""Ratings of answers, kept as the user's own evaluation set (docs/feedback.md).

- `records.py`: what one stored rating holds (pydantic), and the pure parts of a replay: the rank
  of a marked location in a ranked answer, whether an answer changed, the MRR.
- `answers.py`: the answers a process gave out lately (a bounded LRU by `resultId`), so that a
  rating can store what was shown; a rating made into one record per folder.
- `store.py`: the private files (one per workspace folder, under the user's state folder):
  append with the bound, read, clear.
- `replay.py`: `ragls feedback` and `ragls eval --feedback`.
- `tuning.py`: `ragls feedback --tune`, a ranker fitted to a folder's marked ratings, kept only
  when it does not lose to the default ranking on held-back ones (`feedback.tunedRanker` uses it).
"""
