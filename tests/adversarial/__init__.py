"""Attack catalogue for the sealing rules, and honest histories that must stay clean.

Readings chosen where the rules leave room (each test asserts them exactly):

* a parallel digest reseal whose merge keeps one of the two seal files is `resealed` only, not
  also `modified-after-seal` at the merge (the merge is how the second seal point lands);
* an alias score file added after the seal is `duplicate-sheet` only (a new path is not a change
  of the sealed file); a rename of the sealed file to an alias is `deleted-after-seal` plus
  `duplicate-sheet`, both at the rename;
* a file under the study dir that parses as a score table but has neither a `scores_` name nor a
  `rater:` front matter is `stray-scores` with rater null;
* a rater added to the plan after the first seal is no rater of the study: never pending;
* a plan at HEAD that no longer loads (too large, alias bomb) is judged like any other edit of
  the plan after the first seal: `plan-changed-after-seal`, exit 1, not a plan error.
"""
