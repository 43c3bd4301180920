# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Delta debugging over a recorded list of steps (run.py --shrink, and
differential.py's shrinking of a droce/rxe difference)."""


def ddmin(steps, fails):
    """Zeller's ddmin, complements only: the shortest sublist of STEPS
    found for which FAILS (a replay) is still true; STEPS itself if it does
    not fail on replay (a race, not the sequence: shrinking would
    mislead). Returns (steps, replays, reproduced)."""
    if not fails(steps):
        return steps, 1, False
    n, tries = 2, 1
    while len(steps) >= 2:
        size = -(-len(steps) // n)
        for i in range(0, len(steps), size):
            cand = steps[:i] + steps[i + size:]
            tries += 1
            if cand and fails(cand):
                steps, n = cand, max(n - 1, 2)
                break
        else:
            if n >= len(steps):
                break
            n = min(len(steps), 2 * n)
    return steps, tries, True
