"""Tests of the Python module `shardsynth` (synth/python/), run by ctest with
.venv/bin/python (the project environment): python binding_test.py PACKAGE_DIR SYNTH_BINARY.

The module must agree with the `synth` command on the same input."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

MODULE_DIR = sys.argv[1]
SYNTH = sys.argv[2]
sys.path.insert(0, MODULE_DIR)
import shardsynth  # noqa: E402


def synth_quiet(*args):
    """The directives the `synth` command prints for these arguments."""
    return subprocess.run([SYNTH, *args, "--quiet"], check=True, capture_output=True, text=True).stdout


class SolveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mlp = shardsynth.builtin_graph("mlp")

    def test_solve_SeedMlpMatchesTheCommand(self):
        plan = shardsynth.solve(self.mlp, mesh="8", cost_model="slapo")
        self.assertEqual(plan["cost"], 131072)
        self.assertEqual(plan["unit"], "elements")
        self.assertTrue(plan["proven_optimal"])
        self.assertEqual(plan["lower_bound"], 131072)
        self.assertEqual(plan["stop_reason"], "unsat")
        self.assertEqual(plan["directives"], synth_quiet("mlp", "--cost-model", "slapo", "--mesh", "8"))
        self.assertEqual(plan["schedule"]["format"], "shardsynth.schedule/1")
        self.assertEqual(plan["schedule"]["cost"], 131072)

    def test_solve_GraphJsonTextEqualsDictAndTheCommandOnTheFile(self):
        text = json.dumps(self.mlp)
        as_text = shardsynth.solve(text, mesh="2x4")
        as_dict = shardsynth.solve(self.mlp, mesh="2x4")
        self.assertEqual(as_text["directives"], as_dict["directives"])
        self.assertEqual(as_text["cost"], as_dict["cost"])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mlp.json")
            with open(path, "w") as f:
                f.write(text)
            self.assertEqual(as_dict["directives"], synth_quiet(path, "--mesh", "2x4"))

    def test_solve_ScheduleMatchesTheCommandsJson(self):
        plan = shardsynth.solve(self.mlp, mesh="4", cost_model="alpha-beta", mode="training")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "plan.json")
            synth_quiet("mlp", "--mesh", "4", "--mode", "training", "--schedule", path)
            with open(path) as f:
                self.assertEqual(plan["schedule"], json.load(f))

    def test_solve_TraceEndsWithTheProof(self):
        plan = shardsynth.solve(self.mlp, mesh="8", cost_model="slapo")
        trace = plan["trace"]
        self.assertGreaterEqual(len(trace), 2)
        self.assertEqual([step["step"] for step in trace], list(range(len(trace))))
        self.assertEqual(trace[0]["status"], "sat")
        self.assertEqual(trace[0]["total"], 131072)
        self.assertEqual([row["name"] for row in trace[0]["rows"]], ["fc1", "|-x", "fc2", "|-gelu", "output"])
        self.assertEqual(trace[-1]["status"], "unsat")
        self.assertEqual(trace[-1]["bound"], plan["cost"])

    def test_solve_PinsAreRespected(self):
        free = shardsynth.solve(self.mlp, mesh="8", cost_model="slapo")
        pinned = shardsynth.solve(self.mlp, mesh="8", cost_model="slapo", pins=["fc1.weight=RS"])
        specs = {s["tensor"]: s["spec"] for s in pinned["schedule"]["specs"]}
        self.assertEqual(specs["fc1.weight"], "RS")
        self.assertGreater(pinned["cost"], free["cost"])
        self.assertEqual(pinned["directives"],
                         synth_quiet("mlp", "--cost-model", "slapo", "--pin", "fc1.weight=RS"))

    def test_solve_MemoryAndTimeLimitArePassed(self):
        plan = shardsynth.solve(self.mlp, mesh="2x4", mode="training", memory=100000000, time_limit=60)
        self.assertEqual(plan["cost"], 671129)
        self.assertTrue(plan["proven_optimal"])
        # The budget binds: without it the optimum is cheaper.
        free = shardsynth.solve(self.mlp, mesh="2x4", mode="training")
        self.assertLess(free["cost"], plan["cost"])

    def test_solve_BadInputRaisesValueError(self):
        cases = [
            (dict(mesh="0"), "'0'"),
            (dict(cost_model="roofline"), "roofline"),
            (dict(mode="serving"), "serving"),
            (dict(pins=["nosuch=SR"]), "nosuch"),
            (dict(unknown_ops="ignore"), "ignore"),
            (dict(memory=1000), "no plan fits"),
        ]
        for kwargs, named in cases:
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(ValueError) as caught:
                    shardsynth.solve(self.mlp, **kwargs)
                self.assertIn(named, str(caught.exception))
        with self.assertRaises(ValueError):
            shardsynth.solve("{not json")
        broken = json.loads(json.dumps(self.mlp))
        broken["nodes"][1]["kind"] = "frobnicate"
        with self.assertRaises(ValueError) as caught:
            shardsynth.solve(broken)
        self.assertIn("frobnicate", str(caught.exception))
        replicated = shardsynth.solve(broken, unknown_ops="replicate")
        self.assertTrue(replicated["proven_optimal"])
        self.assertEqual(len(replicated["warnings"]), 1)


class BuiltinGraphTest(unittest.TestCase):
    def test_builtin_graph_RoundTripsThroughSolve(self):
        gpt2 = shardsynth.builtin_graph("gpt2", layers=1)
        names = [node["name"] for node in gpt2["nodes"]]
        self.assertIn("h.0.attn.c_attn", names)
        self.assertNotIn("h.1.attn.c_attn", names)
        plan = shardsynth.solve(gpt2, mesh="8")
        self.assertTrue(plan["proven_optimal"])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "gpt2.json")
            with open(path, "w") as f:
                json.dump(gpt2, f)
            self.assertEqual(plan["directives"], synth_quiet("gpt2", "--layers", "1", "--mesh", "8"))
            self.assertEqual(plan["directives"], synth_quiet(path, "--mesh", "8"))

    def test_builtin_graph_LossHeadIsSynthsTrainingGraph(self):
        gpt2 = shardsynth.builtin_graph("gpt2", layers=1, loss_head=True)
        self.assertEqual([n["kind"] for n in gpt2["nodes"][-2:]], ["cross_entropy", "output"])
        plan = shardsynth.solve(gpt2, mesh="8", mode="training")
        self.assertEqual(plan["directives"], synth_quiet("gpt2", "--layers", "1", "--mesh", "8", "--mode", "training"))
        with self.assertRaises(ValueError):
            shardsynth.builtin_graph("mlp", loss_head=True)

    def test_builtin_graph_BadNameRaisesValueError(self):
        with self.assertRaises(ValueError) as caught:
            shardsynth.builtin_graph("resnet")
        self.assertIn("resnet", str(caught.exception))
        with self.assertRaises(ValueError):
            shardsynth.builtin_graph("gpt2", layers=0)


class CollectivesTest(unittest.TestCase):
    def test_collectives_MegatronGpt2PricesItsAllReduces(self):
        gpt2 = shardsynth.builtin_graph("gpt2", layers=1)
        plan = shardsynth.solve(gpt2, mesh="8", mode="training", plan="megatron")
        ledger = shardsynth._native.collectives(gpt2, plan["schedule"])
        self.assertEqual(ledger["cost"], plan["cost"])
        self.assertEqual(ledger["mode"], "training")
        rows = ledger["collectives"]
        self.assertTrue(rows)
        self.assertEqual({r["phase"] for r in rows} - {"forward", "backward", "optimizer"}, set())
        self.assertIn("all_reduce", {r["kind"] for r in rows if r["phase"] == "forward"})
        for r in rows:  # the ring volumes of costs::ring_bytes_sent, fp32 on 8 devices
            local = 4 * r["elements"]
            want = {"all_gather": 7 * local, "reduce_scatter": 7 * local // 8, "all_to_all": 7 * local // 8,
                    "all_reduce": 2 * 7 * local // 8}[r["kind"]]
            self.assertEqual(r["bytes"], want)

    def test_collectives_PlanForAnotherGraphRaisesValueError(self):
        plan = shardsynth.solve(self.mlp_graph(), mesh="8")
        with self.assertRaises(ValueError):
            shardsynth._native.collectives(shardsynth.builtin_graph("gpt2", layers=1), plan["schedule"])

    @staticmethod
    def mlp_graph():
        return shardsynth.builtin_graph("mlp")


class ReshardStepsTest(unittest.TestCase):
    def test_reshard_steps_SwapOfAxesIsTwoAllToAlls(self):
        steps = shardsynth._native.reshard_steps("RS0S1", "S01RR", "2x4")
        self.assertEqual([(s["kind"], s["axis"], s["src_dim"], s["dst_dim"], s["after"]) for s in steps],
                         [("all_to_all", 0, 1, 0, "S0RS1"), ("all_to_all", 1, 2, 0, "S01RR")])

    def test_reshard_steps_PartialToShardIsOneReduceScatter(self):
        steps = shardsynth._native.reshard_steps("RR+P", "SR", "8")
        self.assertEqual([(s["kind"], s["after"]) for s in steps], [("reduce_scatter", "SR")])

    def test_reshard_steps_BadInputRaisesValueError(self):
        for args in (("RS0", "S0", "2x4"), ("RS0S1", "S01R", "2x4"), ("RR", "RR+P0", "2x4"), ("RS", "SR", "two")):
            with self.subTest(args=args), self.assertRaises(ValueError):
                shardsynth._native.reshard_steps(*args)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
