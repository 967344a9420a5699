#!/usr/bin/env python3
"""tunedb.launch (ctypes over libtunedb_cuda.so) without a GPU: the families the library launches,
each one's argument record as it declares it, records built from fields by name and the refusals
of missing, unknown or ill-typed fields, an unknown family named with the ones there are, and the
open that says there is no GPU. The family package of kernels/sparse_mla_decode/python imports
without torch (its op module needs torch, and says so).

Needs TUNEDB_CUDA_LIBRARY (path of libtunedb_cuda.so); CTest sets it and PYTHONPATH
(deploy/CMakeLists.txt).
"""

import ctypes
import struct
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "db" / "python"))
import tunedb  # noqa: E402
import tunedb.launch as launch  # noqa: E402

SIZES = {"pointer": 8, "u64": 8, "i32": 4, "f32": 4}


class Pointer:
    """Stands for a tensor: a device address behind data_ptr()."""

    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


def values_for(layout):
    """Distinct values for every field: addresses 0x1000 apart, 2.5 for floats, 7 for ints."""
    values = {}
    for index, field in enumerate(layout.fields):
        values[field.name] = {"pointer": 0x1000 * (index + 1), "u64": 0x1000 * (index + 1),
                              "i32": 7, "f32": 2.5}[field.kind]
    return values


class ArgsLayoutTest(unittest.TestCase):
    def setUp(self):
        self.families = launch.families()

    def test_both_families_are_served(self):
        self.assertIn("sparse_mla_decode", self.families)
        self.assertIn("fp8_gemm", self.families)
        self.assertEqual(len(self.families), len(set(self.families)))

    def test_each_record_has_named_fields_inside_it_and_apart(self):
        for family in self.families:
            layout = launch.args_layout(family)
            self.assertEqual(layout.family, family)
            self.assertGreater(len(layout.fields), 0, family)
            self.assertEqual(len(layout.names()), len(set(layout.names())), family)
            covered = set()
            for field in layout.fields:
                span = set(range(field.offset, field.offset + SIZES[field.kind]))
                self.assertLessEqual(max(span), layout.size - 1, (family, field))
                self.assertFalse(span & covered, (family, field))
                covered |= span

    def test_a_packed_record_holds_each_value_at_its_declared_offset(self):
        for family in self.families:
            layout = launch.args_layout(family)
            values = values_for(layout)
            first = layout.fields[0]
            if first.kind == "pointer":  # a tensor stands in for the address
                values[first.name] = Pointer(values[first.name])
            record = layout.pack(values)
            self.assertEqual(ctypes.sizeof(record), layout.size)
            for index, field in enumerate(layout.fields):
                fmt = {"pointer": "<Q", "u64": "<Q", "i32": "<i", "f32": "<f"}[field.kind]
                (got,) = struct.unpack_from(fmt, record.raw, field.offset)
                want = values[field.name]
                self.assertEqual(got, want.address if isinstance(want, Pointer) else want,
                                 (family, field))

    def test_missing_unknown_and_ill_typed_fields_are_refused_by_name(self):
        layout = launch.args_layout("fp8_gemm")
        values = values_for(layout)
        missing = dict(values)
        del missing[layout.fields[0].name]
        with self.assertRaises(TypeError) as caught:
            layout.pack(missing)
        self.assertIn("missing " + layout.fields[0].name, str(caught.exception))
        self.assertIn(", ".join(layout.names()), str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            layout.pack(dict(values, alpha=1.0))
        self.assertIn("unknown alpha", str(caught.exception))
        pointer = next(f.name for f in layout.fields if f.kind == "pointer")
        for bad in (-1, "0x10", 1.5):
            with self.assertRaises(TypeError):
                layout.pack(dict(values, **{pointer: bad}))
        size = next(f.name for f in layout.fields if f.kind == "u64")
        with self.assertRaises(ValueError):
            layout.pack(dict(values, **{size: 1 << 64}))

    def test_an_unknown_family_is_refused_naming_the_served_ones(self):
        with self.assertRaises(tunedb.TunedbError) as caught:
            launch.args_layout("no_such_family")
        self.assertEqual(caught.exception.kind, "input")
        for family in self.families:
            self.assertIn(family, str(caught.exception))


class NoGpuTest(unittest.TestCase):
    def test_open_without_a_gpu_says_so(self):
        try:
            with launch.Launcher("/nonexistent/frozen.db"):
                self.fail("opened without a GPU or a file")
        except tunedb.TunedbError as error:
            # No GPU here: the driver check comes first. With one, the missing file is named.
            self.assertIn(error.kind, ("no_gpu", "input"), str(error))


class FamilyPackageTest(unittest.TestCase):
    def test_the_family_package_names_its_family_and_shape_text(self):
        import tunedb_sparse_mla_decode as smla
        self.assertIn(smla.FAMILY, launch.families())
        self.assertEqual(smla.shape_text("bf16", 16, 2048),
                         "kv_format=bf16,local_heads=16,page_size=64,topk=2048")

    def test_its_op_module_needs_torch_only(self):
        try:
            import tunedb_sparse_mla_decode.torch  # noqa: F401
        except ModuleNotFoundError as error:
            self.assertEqual(error.name, "torch")


if __name__ == "__main__":
    unittest.main()
