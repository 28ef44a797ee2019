"""The trainsim package against the trainsim executable of the same build (TRAINSIM_BIN), from
the source tree (tests/python/package.sh runs it in a fresh virtual environment)."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import trainsim

BIN = os.environ.get("TRAINSIM_BIN", "build/trainsim")
TINY = "tests/data/good/tiny.yaml"


def cli(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


class Run(unittest.TestCase):
    def test_equals_the_command_line(self):
        # The issue's own case: the Python result is the CLI's result.json.
        r = trainsim.run("workloads/gpt-175b.yaml", gpus=1024, tp=8, pp=16, fidelity="analytic")
        with tempfile.TemporaryDirectory() as out:
            p = cli("run", "workloads/gpt-175b.yaml", "--gpus", "1024", "--tp", "8", "--pp", "16",
                    "--fidelity", "analytic", "--out", out, "--quiet")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "result.json")) as f:
                want = json.load(f)
        self.assertLessEqual(abs(r.iteration_s - want["metrics"]["iteration_s"]), 1e-9)
        self.assertEqual(r.metrics, want["metrics"])
        self.assertEqual(r.breakdown, want["breakdown_s"])
        self.assertEqual(r.memory, want["memory"])
        self.assertEqual(r.layout["pipeline"], 16)
        self.assertEqual(r.json["layout"]["gpus"], 1024)
        self.assertIn("gpt-175b on frontier", r.summary)

    def test_simgrid_fidelity_twice_in_one_interpreter(self):
        # SimGrid initialises once per process: each call has a process of its own.
        a = trainsim.run(TINY, gpus=8, tp=2, pp=2)
        b = trainsim.run(TINY, gpus=8, tp=2, pp=2)
        self.assertEqual(a.json, b.json)
        self.assertEqual(a.json["fidelity"], "hybrid")
        parts = sum(a.breakdown.values())
        self.assertAlmostEqual(parts, a.iteration_s, delta=1e-6 * a.iteration_s)

    def test_set_overrides_and_switches(self):
        base = trainsim.run(TINY, gpus=8, tp=2, pp=1, fidelity="analytic")
        slower = trainsim.run(TINY, gpus=8, tp=2, pp=1, fidelity="analytic",
                              set={"training.global_batch_size": 64})
        self.assertGreater(slower.iteration_s, base.iteration_s)
        self.assertEqual(slower.json["overrides"], ["training.global_batch_size=64"])
        listed = trainsim.run(TINY, gpus=8, tp=2, pp=1, fidelity="analytic",
                              set=["training.global_batch_size=64"])
        self.assertEqual(listed.iteration_s, slower.iteration_s)
        sp = trainsim.run(TINY, gpus=8, tp=2, pp=1, fidelity="analytic", sequence_parallel=True)
        self.assertTrue(sp.layout["sequence_parallel"])

    def test_out_keeps_the_files(self):
        with tempfile.TemporaryDirectory() as out:
            r = trainsim.run(TINY, gpus=4, tp=2, pp=2, fidelity="analytic", out=out,
                             timeline=True)
            self.assertEqual(r.out_dir, out)
            self.assertTrue(os.path.isfile(os.path.join(out, "result.json")))
            self.assertTrue(os.path.isfile(os.path.join(out, "timeline.json")))
            text = trainsim.explain(out, simulate=0)
            self.assertIn("tiny", text)


class Errors(unittest.TestCase):
    def test_file_error_has_file_line_key(self):
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run("tests/data/bad/bad-enum.yaml")
        e = c.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.status, 2)
        self.assertEqual(e.file, "tests/data/bad/bad-enum.yaml")
        self.assertEqual((e.line, e.column), (16, 13))
        self.assertEqual(e.key, "parallelism.schedule")
        self.assertIsNone(e.flag)
        self.assertIn("expected one of 'gpipe'", e.message)
        # The message is the command line's first error line, word for word.
        self.assertEqual(e.message, cli("run", "tests/data/bad/bad-enum.yaml").stderr.splitlines()[0])

    def test_missing_key_names_its_path(self):
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run("tests/data/bad/missing-required-key.yaml")
        self.assertEqual(c.exception.key, "model.hidden_size")

    def test_flag_and_set_errors(self):
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run(TINY, tp=10**30)
        self.assertEqual(c.exception.flag, "--tp")
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run(TINY, set={"model.num_layers": "many"})
        self.assertEqual(c.exception.key, "model.num_layers")
        self.assertEqual(c.exception.flag, "--set model.num_layers=many")
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run("no/such/workload.yaml")
        self.assertIn("no/such/workload.yaml", c.exception.message)

    def test_layout_that_does_not_fit(self):
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.run("workloads/gpt-175b.yaml", gpus=16, tp=8, pp=2, fidelity="analytic")
        self.assertIn("HBM", c.exception.stderr + c.exception.message)

    def test_python_arguments_are_checked_before_any_call(self):
        with self.assertRaisesRegex(TypeError, "did you mean 'tp'"):
            trainsim.run(TINY, tpp=2)
        with self.assertRaisesRegex(TypeError, "switch"):
            trainsim.run(TINY, sequence_parallel=1)
        with self.assertRaisesRegex(TypeError, "takes N"):
            trainsim.run(TINY, tp=True)
        with self.assertRaisesRegex(ValueError, "finite"):
            trainsim.run(TINY, gpus=float("nan"))
        with self.assertRaisesRegex(TypeError, "expected a number or a string"):
            trainsim.run(TINY, gpus={"a": 1})
        with self.assertRaisesRegex(ValueError, "NUL"):
            trainsim.run("tiny\0.yaml")
        with self.assertRaisesRegex(TypeError, "explain"):
            trainsim.run(TINY, explain=True)
        with self.assertRaisesRegex(TypeError, "out=DIR"):
            trainsim.run(TINY, report=True)
        # Floats the command line reads as text, checked there.
        with self.assertRaises(trainsim.InputError):
            trainsim.run(TINY, tp=2.5)

    def test_interrupt_raises_keyboard_interrupt_and_the_interpreter_goes_on(self):
        # Four minutes uninterrupted (aggregate, every rank played): SIGINT after half a second
        # must stop the command, raise KeyboardInterrupt here, and leave the library usable.
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        started = time.monotonic()
        returned = False
        with self.assertRaises(KeyboardInterrupt):
            trainsim.run("workloads/gpt-175b.yaml", gpus=1024, tp=8, pp=16,
                         play_every_rank=True, fidelity="aggregate")
            returned = True
        timer.join()
        self.assertFalse(returned, "the call ended without the interrupt")
        self.assertLess(time.monotonic() - started, 30)
        self.assertGreater(trainsim.run(TINY, gpus=2, tp=2, pp=1, fidelity="analytic").iteration_s, 0)


class Studies(unittest.TestCase):
    def test_scale_rows(self):
        rows = trainsim.scale("workloads/gpt-175b.yaml", gpus=[256, 512], strong=True, tp=8,
                              pp=16, fidelity="analytic")
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual([r["gpus"] for r in rows], [256, 512])
        self.assertEqual(rows[0]["efficiency"], 1)
        self.assertLess(rows[1]["efficiency"], 1)
        with self.assertRaises(TypeError):
            trainsim.scale(TINY, gpus=[2, 4])

    def test_sweep_from_a_dict(self):
        spec = {"name": "py", "workload": TINY, "fidelity": "analytic",
                "fixed": {"gpus": 8}, "grid": {"tp": [1, 2], "pp": [1, 2]}}
        rows = trainsim.sweep(spec, jobs=1)
        rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
        self.assertEqual(len(rows), 4)
        self.assertEqual(sorted((r["tp"], r["pp"]) for r in rows), [(1, 1), (1, 2), (2, 1), (2, 2)])
        with self.assertRaises(trainsim.InputError) as c:
            trainsim.sweep(dict(spec, grid={"tpp": [1, 2]}))
        self.assertIn("tpp", c.exception.message)

    def test_sweep_spares_the_users_files(self):
        # A dict's spec file is private: a user's file of any name in out, or a link there,
        # keeps its content and its target.
        with tempfile.TemporaryDirectory() as d:
            victim = os.path.join(d, "victim.txt")
            with open(victim, "w") as f:
                f.write("mine")
            out = os.path.join(d, "out")
            os.mkdir(out)
            for name in (".sweep-spec.yaml", "sweep-spec.yaml"):
                os.symlink(victim, os.path.join(out, name))
            spec = {"workload": TINY, "fidelity": "analytic", "fixed": {"gpus": 8},
                    "grid": {"tp": [3]}}
            with self.assertRaises(trainsim.InputError):
                trainsim.sweep(spec, out=out, jobs=1)
            with open(victim) as f:
                self.assertEqual(f.read(), "mine")


class Imports(unittest.TestCase):
    def test_import_hf_gives_the_preset_model(self):
        text = trainsim.import_hf("tests/data/hf/llama3-8b.json", seq_length=8192)
        self.assertEqual(text, cli("import", "hf", "tests/data/hf/llama3-8b.json",
                                   "--seq-length", "8192").stdout)
        self.assertIn("num_query_groups: 8", text)

    def test_import_megatron(self):
        text = trainsim.import_megatron("--num-layers 2 --hidden-size 256 "
                                        "--num-attention-heads 4 --seq-length 128 "
                                        "--max-position-embeddings 128 --micro-batch-size 1 "
                                        "--global-batch-size 8 --bf16", vocab_size=1000)
        self.assertIn("num_layers: 2", text)
        with self.assertRaises(trainsim.InputError):
            trainsim.import_hf("tests/data/bad/empty.yaml")


if __name__ == "__main__":
    unittest.main()
