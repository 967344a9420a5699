#!/usr/bin/env python3
"""scripts/regret.py (the search's and the bucket rule's regret against an oracle sweep) on the
tunedb fixture's store and hand-written oracle stores: which timings each side reads, the refusals.

Needs what tests/test_tunedb_python.py needs (CTest sets TUNEDB_LIBRARY and TUNEDB_MAKE_FIXTURE).
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tunedb_python import (DEFAULT, FAMILY, SHAPE_TEXT, TUNED_128, TUNED_8,  # noqa: E402
                                FixtureTest)


class RegretScriptTest(FixtureTest):
    """scripts/regret.py on the fixture store (tuned at 1, 8, 32, 128 for sm_120) and an oracle
    store holding hand-written medians at batch 8 (tuned) and 20 (untuned): first passes (stage
    measure) and full-protocol re-timings (stage retime)."""

    SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "regret.py"

    def make_oracle(self, medians, stage="measure", run=None, name="oracle.db"):
        oracle = self.dir / name
        if not oracle.exists():
            shutil.copy(self.dir / "store.db", oracle)
        db = sqlite3.connect(oracle)
        first_run, source = db.execute("SELECT run_id, source_hash FROM winners LIMIT 1").fetchone()
        for batch, by_params in medians.items():
            db.execute("INSERT OR IGNORE INTO problems (family, shape, batch) VALUES (?, ?, ?)",
                       (FAMILY, SHAPE_TEXT, batch))
            problem = db.execute("SELECT id FROM problems WHERE family = ? AND shape = ? AND "
                                 "batch = ?", (FAMILY, SHAPE_TEXT, batch)).fetchone()[0]
            for params, timing in by_params.items():
                # A median alone, or (median, p10, p90).
                median, p10, p90 = timing if isinstance(timing, tuple) else (timing, None, None)
                db.execute(
                    "INSERT INTO trials (run_id, problem_id, source_hash, stage, budget_arch, "
                    "measured_arch, device_name, params_json, fate, reason, median_us, p10_us, "
                    "p90_us) VALUES (?, ?, ?, ?, 'sm_120', 'sm_90', 'NVIDIA H200', ?, 'measured', "
                    "'oracle', ?, ?, ?)",
                    (run or first_run, problem, source, stage, params, median, p10, p90))
        db.commit()
        db.close()
        return oracle

    def regret(self, check, oracle, limit, *more):
        env = dict(os.environ)
        return subprocess.run(
            [sys.executable, str(self.SCRIPT), check, "--tuned", str(self.dir / "store.db"),
             "--oracle", str(oracle), "--max-regret", str(limit), *more],
            capture_output=True, text=True, env=env)

    @staticmethod
    def canonical(params):  # the store's params_json form: sorted keys, no spaces
        return json.dumps(params, sort_keys=True, separators=(",", ":"))

    def test_first_pass_search_and_bucket_regret_against_the_oracle(self):
        tuned8, tuned128, default = (self.canonical(p) for p in (TUNED_8, TUNED_128, DEFAULT))
        oracle = self.make_oracle({
            8: {tuned8: 20.0, tuned128: 19.0, default: 25.0},    # the winner is 1/19 = 5.26 % off
            20: {tuned8: 29.4, default: 30.0},                    # lookup: bucket -> 32 = default
        })
        first = ("--protocol", "first-pass")
        search = self.regret("search", oracle, 2, *first)
        self.assertEqual(search.returncode, 1, search.stdout + search.stderr)
        self.assertIn("search: worst regret 5.26% at batch 8 (1 batches)", search.stdout)
        self.assertIn("search: over 2%: 8 (5.26%)", search.stdout)
        self.assertIn("tuned side first pass (stage measure); oracle side first pass", search.stdout)
        self.assertEqual(self.regret("search", oracle, 6, *first).returncode, 0)
        bucket = self.regret("bucket", oracle, 3, *first)
        self.assertEqual(bucket.returncode, 0, bucket.stdout + bucket.stderr)
        self.assertIn("bucket -> 32", bucket.stdout)
        self.assertIn("bucket: worst regret 2.04% at batch 20 (1 batches)", bucket.stdout)
        self.assertEqual(self.regret("bucket", oracle, 2, *first).returncode, 1)
        # Fewer batches than asked for is a failure, said so, whatever the regret.
        few = self.regret("search", oracle, 6, "--min-batches", "12", *first)
        self.assertEqual(few.returncode, 1, few.stdout + few.stderr)
        self.assertIn("only 1 batches compared, fewer than --min-batches 12", few.stdout)
        # The default protocol is the full one, which this oracle lacks: said so, exit 2.
        full = self.regret("search", oracle, 6)
        self.assertEqual(full.returncode, 2)
        self.assertIn("no measured trials of stage retime", full.stderr)

    def test_full_protocol_regret_reads_only_the_re_timings_of_one_run(self):
        tuned8, tuned128, default = (self.canonical(p) for p in (TUNED_8, TUNED_128, DEFAULT))
        # The screens say the winner is 5 % off and an unscreened-in-full config is fastest ...
        self.make_oracle({8: {tuned8: 20.0, tuned128: 19.0, default: 25.0, "{}": 10.0},
                          20: {tuned8: 29.4, default: 30.0}})
        # ... the full timings of both sides, one run, say 0.5 % and 1 %.
        oracle = self.make_oracle({8: {tuned8: 20.0, tuned128: 19.9, default: 25.0},
                                   20: {tuned8: 29.7, default: 30.0}}, stage="retime")
        search = self.regret("search", oracle, 2)
        self.assertEqual(search.returncode, 0, search.stdout + search.stderr)
        self.assertIn("search: worst regret 0.50% at batch 8 (1 batches)", search.stdout)
        self.assertIn("search: over 2%: none", search.stdout)
        self.assertIn("tuned side full protocol (timing protocol 2 in full, interleaved rounds; "
                      "stage retime); oracle side full protocol", search.stdout)
        self.assertIn("of 3)", search.stdout)  # the best among the 3 timed in full
        bucket = self.regret("bucket", oracle, 3)
        self.assertEqual(bucket.returncode, 0, bucket.stdout + bucket.stderr)
        self.assertIn("bucket: worst regret 1.01% at batch 20 (1 batches)", bucket.stdout)

    def test_a_regret_within_the_two_timings_spread_is_said_and_still_counts(self):
        tuned8, tuned128, default = (self.canonical(p) for p in (TUNED_8, TUNED_128, DEFAULT))
        # Batch 8: the winner 5.26 % off, p10-p90 ranges overlapping; batch 20: the lookup 2.04 %
        # off, ranges apart.
        oracle = self.make_oracle({8: {tuned8: (20.0, 19.2, 21.0), tuned128: (19.0, 18.8, 19.5),
                                       default: (25.0, 24.0, 26.0)},
                                   20: {tuned8: (29.4, 29.3, 29.5), default: (30.0, 29.8, 30.2)}},
                                  stage="retime")
        search = self.regret("search", oracle, 2)
        self.assertEqual(search.returncode, 1, search.stdout + search.stderr)  # still over
        self.assertIn("(p10-p90 19.20-21.00 against 18.80-19.50: overlapping)", search.stdout)
        self.assertIn("search: over 2% with the two sides' p10-p90 overlapping (within the run's "
                      "own spread): 8", search.stdout)
        bucket = self.regret("bucket", oracle, 1)
        self.assertEqual(bucket.returncode, 1, bucket.stdout + bucket.stderr)
        self.assertIn("(p10-p90 29.80-30.20 against 29.30-29.50: apart)", bucket.stdout)
        self.assertNotIn("overlapping (within", bucket.stdout)
        # The oracle's best itself, and timings without quantiles, get no such note.
        bare = self.make_oracle({8: {tuned8: 20.0, tuned128: 19.0, default: 25.0}},
                                stage="retime", name="bare.db")
        self.assertNotIn("p10-p90", self.regret("search", bare, 6).stdout)

    def test_a_tuned_config_the_oracle_did_not_time_in_full_is_bad_input(self):
        tuned128, default = self.canonical(TUNED_128), self.canonical(DEFAULT)
        oracle = self.make_oracle({8: {tuned128: 19.9, default: 25.0}}, stage="retime")
        result = self.regret("search", oracle, 2)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("batch(es) 8 has no full-protocol timing", result.stderr)
        self.assertIn("--also-time", result.stderr)

    def test_full_protocol_timings_from_two_runs_are_refused(self):
        tuned8, default = self.canonical(TUNED_8), self.canonical(DEFAULT)
        self.make_oracle({8: {default: 25.0}}, stage="retime")
        oracle = self.make_oracle({8: {tuned8: 20.0}}, stage="retime", run=99)
        result = self.regret("search", oracle, 2)
        self.assertEqual(result.returncode, 2)
        self.assertIn("must be timed in one run", result.stderr)

    def test_also_time_writes_the_tuned_side_of_each_check(self):
        out = self.dir / "also.json"

        def run(which, batches, *more):
            return subprocess.run(
                [sys.executable, str(self.SCRIPT), "also-time", which, "--tuned",
                 str(self.dir / "store.db"), "--batches", batches, "--out", str(out), *more],
                capture_output=True, text=True)

        def also(which, batches):
            result = run(which, batches, "--budget-arch", "sm_120")
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            return json.loads(out.read_text())

        # The fixture holds winners for sm_120 and sm_90: which one is not guessed.
        several = run("search", "8")
        self.assertEqual(several.returncode, 2)
        self.assertIn("pick it with --budget-arch", several.stderr)
        self.assertFalse(out.exists())

        # search: the winners at the tuned batches asked for; untuned ones are not compared.
        self.assertEqual(also("search", "8,20,128"), {"8": [TUNED_8], "128": [TUNED_128]})
        # bucket: the lookup's answer at the untuned ones (20 -> 32 kept the default).
        self.assertEqual(also("bucket", "8,20,4096"), {"20": [DEFAULT], "4096": [TUNED_128]})

    def test_an_oracle_mixing_protocols_is_bad_input(self):
        oracle = self.make_oracle({8: {"{}": 20.0, '{"a":1}': 21.0}})
        db = sqlite3.connect(oracle)
        db.execute("UPDATE trials SET measure_env = 'protocol 2, screen 4' WHERE id = "
                   "(SELECT MAX(id) FROM trials WHERE stage = 'measure')")
        db.commit()
        db.close()
        result = self.regret("search", oracle, 2, "--protocol", "first-pass")
        self.assertEqual(result.returncode, 2)
        self.assertIn("mix protocols", result.stderr)

    def test_an_empty_oracle_is_bad_input(self):
        empty = self.make_oracle({})
        result = self.regret("search", empty, 2, "--protocol", "first-pass")
        self.assertEqual(result.returncode, 2)
        self.assertIn("holds no measured trials of stage measure", result.stderr)


if __name__ == "__main__":
    unittest.main()
