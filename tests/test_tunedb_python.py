#!/usr/bin/env python3
"""tunedb's Python module (ctypes over libtunedb.so) on a real frozen DB.

Needs TUNEDB_LIBRARY (path of libtunedb.so) and TUNEDB_MAKE_FIXTURE (path of tunedb_make_fixture,
which writes the store and frozen DB of tests/support/fixture.hpp); CTest sets both
(db/CMakeLists.txt).
"""

import ctypes
import gc
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "db" / "python"))
import tunedb  # noqa: E402

FAMILY = "sparse_mla_decode"
# The family's canonical dimensions (64 heads / TP 4 = 16 local heads).
SHAPE = dict(local_heads=16, topk=2048, kv_format="fp8_ds_mla", page_size=64)
SHAPE_TEXT = "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048"
DEFAULT = dict(block_h=16, block_t=16, num_stages=2, num_warps=4, target_ctas=512)
TUNED_8 = dict(block_h=16, block_t=32, num_stages=2, num_warps=4, target_ctas=512)
TUNED_128 = dict(block_h=16, block_t=64, num_stages=3, num_warps=4, target_ctas=256)


class FixtureTest(unittest.TestCase):
    """The fixture's store and frozen DB in a fresh temporary directory."""

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="tunedb_python_"))
        maker = os.environ.get("TUNEDB_MAKE_FIXTURE")
        if not maker:
            self.fail("TUNEDB_MAKE_FIXTURE is not set: run this test through ctest")
        subprocess.run([maker, str(self.dir)], check=True, capture_output=True)
        self.frozen = self.dir / "frozen.db"

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class FrozenDbTest(FixtureTest):
    def lookup(self, db, batch, arch="sm_120", family=FAMILY, **shape):
        return db.lookup(family, arch, batch=batch, **{**SHAPE, **shape})

    def test_exact_match_returns_the_winner_and_where_it_was_timed(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 8)
        self.assertEqual(found.how, "exact")
        self.assertEqual(found.miss, "none")
        self.assertEqual(found.params, TUNED_8)
        self.assertEqual(found.tuned_batch, 8)
        self.assertAlmostEqual(found.median_us, 20.5)
        self.assertEqual(found.run_id, 1)
        self.assertEqual(found.measured_arch, "sm_90")
        self.assertEqual(found.device_name, "NVIDIA H200")
        self.assertFalse(found.default_kept)
        self.assertEqual(found.kernel_names, ("_Z17sparse_mla_decodev",))
        self.assertEqual(bytes(found.cubin[64:]), ("fixture cubin sm_120 " + found.params_json).encode())

    def test_between_tuned_batches_takes_the_next_larger(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 16)
        self.assertEqual((found.how, found.tuned_batch), ("bucket", 32))
        self.assertEqual(found.params, DEFAULT)  # the sweep kept the default at batch 32
        self.assertTrue(found.default_kept)

    def test_above_the_largest_tuned_batch_takes_the_largest(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 4096)
        self.assertEqual((found.how, found.tuned_batch), ("bucket", 128))
        self.assertEqual(found.params, TUNED_128)

    def test_untuned_shape_falls_back_to_the_default(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 8, topk=1024)
        self.assertEqual((found.how, found.miss), ("default", "shape_not_tuned"))
        self.assertEqual(found.params, DEFAULT)
        self.assertTrue(math.isnan(found.median_us))
        self.assertEqual(found.device_name, "")

    def test_arch_the_file_was_not_frozen_for_is_flagged(self):
        # The store also holds sm_90 winners; the fixture froze only sm_120.
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 8, arch="sm_90")
        self.assertEqual((found.how, found.miss), ("default", "arch_not_in_db"))
        self.assertEqual(found.params, DEFAULT)

    def test_unknown_family_without_default_is_not_found(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = self.lookup(db, 8, family="dense_gemm")
        self.assertEqual((found.how, found.miss), ("not_found", "family_not_in_db"))
        self.assertEqual(found.params, {})

    def test_lookups_from_many_threads_agree(self):
        errors = []
        with tunedb.TuningDb(str(self.frozen)) as db:
            def work():
                for batch in (1, 8, 16, 128, 4096):
                    found = self.lookup(db, batch)
                    if found.how not in ("exact", "bucket"):
                        errors.append((batch, found.how))
            threads = [threading.Thread(target=work) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        self.assertEqual(errors, [])

    def test_missing_file_names_the_path(self):
        missing = self.dir / "nope.db"
        with self.assertRaises(tunedb.TunedbError) as caught:
            tunedb.TuningDb(str(missing))
        self.assertEqual(caught.exception.kind, "input")
        self.assertIn(str(missing) + " does not exist", str(caught.exception))

    def test_random_bytes_are_refused_as_damaged(self):
        junk = self.dir / "junk.db"
        junk.write_bytes(os.urandom(8192))
        with self.assertRaises(tunedb.TunedbError) as caught:
            tunedb.TuningDb(str(junk))
        self.assertEqual(caught.exception.kind, "db")
        self.assertIn("corrupted, truncated or not a SQLite database", str(caught.exception))

    def test_edited_frozen_file_fails_the_checksum(self):
        edited = self.dir / "edited.db"
        shutil.copy(self.frozen, edited)
        with sqlite3.connect(edited) as connection:
            connection.execute("UPDATE winners SET median_us = 1.0 WHERE batch = 8")
        connection.close()
        tunedb.verify(str(self.frozen))  # the original still verifies
        for attempt in (lambda: tunedb.verify(str(edited)), lambda: tunedb.TuningDb(str(edited))):
            with self.assertRaises(tunedb.TunedbError) as caught:
                attempt()
            self.assertEqual(caught.exception.kind, "db")
            self.assertIn("checksum mismatch", str(caught.exception))

    def test_unmarked_frozen_file_with_edited_winner_and_cubin_is_refused(self):
        # Issue 11's attack: clear the frozen marker, then edit a winner and every cubin.
        edited = self.dir / "unmarked.db"
        shutil.copy(self.frozen, edited)
        connection = sqlite3.connect(edited)
        connection.executescript(
            "PRAGMA application_id = 1414876754; DELETE FROM metadata WHERE key = 'frozen'; "
            "UPDATE winners SET median_us = 1.0; UPDATE cubins SET bytes = x'DEADBEEF';")
        connection.close()
        for attempt in (lambda: tunedb.verify(str(edited)), lambda: tunedb.TuningDb(str(edited))):
            with self.assertRaises(tunedb.TunedbError) as caught:
                attempt()
            self.assertEqual(caught.exception.kind, "db")
            self.assertIn(str(edited) + " holds a frozen DB's tables (cubins, metadata) but its "
                          "header does not mark it frozen", str(caught.exception))

    def test_verify_refuses_a_store(self):
        with self.assertRaises(tunedb.TunedbError) as caught:
            tunedb.verify(str(self.dir / "store.db"))
        self.assertIn("is a tuning store, not a frozen DB", str(caught.exception))

    def test_shape_as_canonical_text_gives_the_same_answer(self):
        self.assertEqual(tunedb.canonical_shape(**SHAPE), SHAPE_TEXT)
        with tunedb.TuningDb(str(self.frozen)) as db:
            found = db.lookup(FAMILY, "sm_120", batch=8, shape=SHAPE_TEXT)
        self.assertEqual((found.how, found.params), ("exact", TUNED_8))

    def test_shape_text_that_is_not_canonical_is_refused(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            with self.assertRaises(tunedb.TunedbError) as caught:
                db.lookup(FAMILY, "sm_120", batch=8, shape="topk=2048,local_heads=16")
        self.assertEqual(caught.exception.kind, "input")
        self.assertIn("is not canonical", str(caught.exception))

    def test_cubin_is_a_read_only_view_not_a_copy(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            first = self.lookup(db, 8)
            second = self.lookup(db, 8)
            self.assertIsInstance(first.cubin, memoryview)
            self.assertTrue(first.cubin.readonly)
            # Both views look at the library's one image: nothing was copied.
            self.assertEqual(ctypes.addressof(first.cubin.obj), ctypes.addressof(second.cubin.obj))

    def test_a_cubin_view_outlives_close_and_then_releases_the_db(self):
        db = tunedb.TuningDb(str(self.frozen))
        found = self.lookup(db, 8)
        db.close()
        with self.assertRaises(tunedb.TunedbError):
            self.lookup(db, 8)
        self.assertIsNotNone(db._handle)  # a view is alive: freeing now would leave it dangling
        self.assertEqual(bytes(found.cubin[64:]),
                         ("fixture cubin sm_120 " + found.params_json).encode())
        del found
        gc.collect()
        self.assertIsNone(db._handle)

    def test_close_during_lookups_in_other_threads_is_safe(self):
        db = tunedb.TuningDb(str(self.frozen))
        started = threading.Barrier(5)
        outcomes = []

        def work():
            started.wait()
            try:
                while True:
                    found = self.lookup(db, 8)
                    if bytes(found.cubin[:4]) != b"\x7fELF":
                        outcomes.append("bad cubin")
                        return
            except tunedb.TunedbError as error:
                outcomes.append(str(error))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        started.wait()
        time.sleep(0.2)
        db.close()
        for thread in threads:
            thread.join(10)
        self.assertEqual(outcomes, ["lookup on a closed TuningDb"] * 4)
        gc.collect()
        self.assertIsNone(db._handle)

    def test_lookup_after_close_raises(self):
        db = tunedb.TuningDb(str(self.frozen))
        db.close()
        with self.assertRaises(tunedb.TunedbError):
            self.lookup(db, 8)


class ShapeHandleTest(FixtureTest):
    """TuningDb.shape(): resolved once, then O(1) lookups by batch (fixture tuned at 1, 8, 32,
    128 for sm_120)."""

    def test_every_batch_follows_the_bucket_rule_and_above_the_largest(self):
        expected = {1: 1, 2: 8, 8: 8, 9: 32, 20: 32, 33: 128, 100: 128, 128: 128, 129: 128,
                    512: 128, 100000: 128}
        with tunedb.TuningDb(str(self.frozen)) as db:
            shape = db.shape(FAMILY, "sm_120", **SHAPE)
            self.assertEqual(shape.largest_tuned_batch, 128)
            answers = {batch: shape.lookup(batch) for batch in expected}
            shape.close()
        for batch, tuned in expected.items():
            self.assertEqual(answers[batch].tuned_batch, tuned, batch)
            self.assertEqual(answers[batch].how, "exact" if tuned == batch else "bucket", batch)
        self.assertEqual(answers[8].params, TUNED_8)
        self.assertEqual(answers[512].params, TUNED_128)
        self.assertEqual(answers[20].params, DEFAULT)
        self.assertTrue(answers[20].default_kept)
        self.assertIsNotNone(answers[512].cubin)

    def test_batch_zero_or_negative_is_refused(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            with db.shape(FAMILY, "sm_120", shape=SHAPE_TEXT) as shape:
                for batch in (0, -1):
                    with self.assertRaises(tunedb.TunedbError) as caught:
                        shape.lookup(batch)
                    self.assertEqual(caught.exception.kind, "input")
                    self.assertIn(f"batch {batch} is not a batch size", str(caught.exception))
                with self.assertRaises(tunedb.TunedbError):
                    shape.lookup(2**40)

    def test_untuned_arch_answers_the_default_and_bad_shape_is_refused(self):
        with tunedb.TuningDb(str(self.frozen)) as db:
            with db.shape(FAMILY, "sm_75", **SHAPE) as shape:
                found = shape.lookup(37)
            self.assertEqual((found.how, found.miss), ("default", "arch_not_in_db"))
            self.assertEqual(found.params, DEFAULT)
            with self.assertRaises(tunedb.TunedbError) as caught:
                db.shape(FAMILY, "sm_120", shape="topk=2048,local_heads=16")
            self.assertIn("is not canonical", str(caught.exception))

    def test_a_live_shape_keeps_the_db_open_and_a_closed_shape_refuses(self):
        db = tunedb.TuningDb(str(self.frozen))
        shape = db.shape(FAMILY, "sm_120", **SHAPE)
        db.close()
        self.assertEqual(shape.lookup(8).params, TUNED_8)  # freed only when the shape closes
        with self.assertRaises(tunedb.TunedbError):
            db.lookup(FAMILY, "sm_120", batch=8, **SHAPE)
        shape.close()
        with self.assertRaises(tunedb.TunedbError) as caught:
            shape.lookup(8)
        self.assertIn("closed Shape", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
