"""The fabrications that passed as verified, and the disagreements that raised false alarms.

The real ``citelens check`` (JSON, SARIF and text) against the fake APIs, whose records
disagree the way real sources do (``tests/fakes/scholarly.title_as``: Crossref's ERRATUM
title with the real one in ``subtitle``, MathML, ``&amp;``, a title an index cut off, author
lists ending in "et al." or cut at ten names, the preprint's own title, a journal only
OpenAlex's ``locations`` list); and the title quick fix through the language server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from tests.fakes.scholarly import ScholarlyFake, running
from tests.harness import ROOT
from tests.lsp_session import diagnostics, open_doc, session, uri
from tests.test_lsp_verification import apply_text_edits

TWELVE = [f"{first} {last}" for first, last in zip(
    "Ada Ben Cleo Dan Eva Finn Gus Hana Ivo Jan Kira Lev".split(),
    "Okafor Lindqvist Moreau Tanaka Novak Silva Brandt Kowalski Haddad Rossi Berg Costa".split(),
    strict=True)]

PAPERS: list[dict[str, Any]] = [
    # ---- real papers the fabricated entries below misquote
    {"title": "Extensible Prompts for Language Models on Zero-shot Language Style Customization",
     "authors": ["Can Xu", "Qingfeng Sun", "Kai Zheng", "Xiubo Geng"], "year": 2023,
     "venue": "Neural Information Processing Systems", "arxiv": "2212.00616"},
    {"title": "Graph Neural Networks for Citation Recommendation",
     "authors": ["Lena Hoffmann", "Arjun Mehta"], "year": 2021, "venue": "Scientometrics",
     "doi": "10.1007/s11192-021-04123-x"},
    {"title": "Sparse Regularization of Attention in Long-Context Transformers",
     "authors": ["Mira Okafor", "Tomas Lindqvist"], "year": 2026, "arxiv": "2602.12251",
     "doi": "10.48550/arXiv.2602.12251"},
    {"title": "Token Merging for Efficient Video Diffusion",
     "authors": ["Yuki Sato", "Pedro Alves"], "year": 2026, "arxiv": "2601.04412",
     "doi": "10.48550/arXiv.2601.04412", "s2_venue_empty": True},
    {"title": "Contrastive Pretraining of Scientific Claim Encoders",
     "authors": ["Noor Haddad", "Ines Costa"], "year": 2024,
     "venue": "Transactions of the Association for Computational Linguistics",
     "doi": "10.1162/tacl_a_00712", "arxiv": "2403.01234"},
    # ---- real papers cited right, described differently by the sources
    {"title": "Jamming transition in soft sphere packings under cyclic shear",
     "authors": ["Rui Tanaka", "Olga Novak"], "year": 2019, "venue": "Physical Review E",
     "doi": "10.1103/physreve.99.012901", "sources": ["crossref", "doi"],
     "crossref_title": "ERRATUM",
     "crossref_subtitle": "Jamming transition in soft sphere packings under cyclic shear"},
    {"title": "Scaling of the H2 dissociation energy in strong laser fields",
     "authors": ["Marta Silva", "Jon Brandt"], "year": 2018, "venue": "Physical Review A",
     "doi": "10.1103/physreva.97.043402", "sources": ["crossref", "doi"],
     "crossref_title": 'Scaling of the <mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" '
                       'display="inline"><mml:msub><mml:mi mathvariant="normal">H</mml:mi>'
                       "<mml:mn>2</mml:mn></mml:msub></mml:math> dissociation energy in strong "
                       "laser fields"},
    {"title": "Pattern Formation and Defect Dynamics in Active Nematics",
     "authors": ["Kira Berg", "Lev Costa"], "year": 2020, "venue": "Soft Matter",
     "doi": "10.1039/c9sm02101a", "sources": ["crossref", "doi"],
     "crossref_title": "Pattern Formation &amp; Defect Dynamics in Active Nematics"},
    {"title": "Observation of Anomalous Diffusion of Colloidal Tracers in Dense Bacterial "
              "Suspensions near Walls",
     "authors": ["Gus Kowalski", "Hana Rossi"], "year": 2022, "venue": "Physical Review E",
     "doi": "10.1103/physreve.105.044601",
     "s2_title": "Observation of Anomalous Diffusion of Colloidal Tracers ..."},
    {"title": "A Twelve-Author Survey of Reproducible Citation Checking",
     "authors": TWELVE, "year": 2023, "venue": "Scientometrics",
     "doi": "10.1007/s11192-023-04700-z", "s2_authors": TWELVE[:10]},
    {"title": "Measuring Citation Accuracy in Physics Preprints",
     "authors": TWELVE[:5], "year": 2021, "venue": "Quantitative Science Studies",
     "doi": "10.1162/qss_a_00120", "sources": ["crossref", "doi"],
     "authors_crossref": [*TWELVE[:3], "et al."]},
    {"title": "Neural Ranking Models for Citation Screening",
     "authors": ["Finn Moreau", "Cleo Tanaka"], "year": 2022,
     "venue": "Information Processing & Management", "doi": "10.1016/j.ipm.2022.102987",
     "arxiv": "2109.05551", "arxiv_title": "Neural Ranking Networks for Citation Screening"},
    {"title": "Calibrated Uncertainty for Citation Intent Classifiers",
     "authors": ["Ivo Haddad", "Jan Rossi"], "year": 2025, "arxiv": "2502.07777",
     "doi": "10.48550/arXiv.2502.07777",
     "openalex_published_in": ["Journal of Machine Learning Research"]},
]

BIB = r"""@inproceedings{xu2023prompts,
  title = {Extensible Prompts towards Language Models on Zero-shot Language Style Customization},
  author = {Xu, Can and Sun, Qingfeng and Zheng, Kai and Geng, Xiubo},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2023},
  eprint = {2212.00616},
  archivePrefix = {arXiv},
}

@article{hoffmann2021gnn,
  title = {Graph Neural Network for Citation Recommendation},
  author = {Hoffmann, Lena and Mehta, Arjun},
  journal = {Scientometrics},
  year = {2021},
  doi = {10.1007/s11192-021-04123-x},
}

@article{okafor2026sparse,
  title = {Sparse Regularization of Attention in Long-Context Transformers},
  author = {Okafor, Mira and Lindqvist, Tomas},
  journal = {Symposium on Regularization Techniques},
  year = {2026},
  doi = {10.48550/arXiv.2602.12251},
}

@inproceedings{sato2026tokens,
  title = {Token Merging for Efficient Video Diffusion},
  author = {Sato, Yuki and Alves, Pedro},
  booktitle = {CVPR},
  year = {2026},
  eprint = {2601.04412},
  archivePrefix = {arXiv},
}

@inproceedings{haddad2024claims,
  title = {Contrastive Pretraining of Scientific Claim Encoders},
  author = {Haddad, Noor and Costa, Ines},
  booktitle = {CVPR},
  year = {2024},
  eprint = {2403.01234},
  archivePrefix = {arXiv},
}

@article{made2024up,
  title = {Quantum Annealing Schedules for Citation Graph Partitioning},
  author = {Doe, Jane and Roe, Richard},
  journal = {Journal of Imaginary Results},
  year = {2024},
}

@article{erratum,
  title = {Jamming transition in soft sphere packings under cyclic shear},
  author = {Tanaka, Rui and Novak, Olga},
  journal = {Phys. Rev. E},
  year = {2019},
  doi = {10.1103/PhysRevE.99.012901},
}

@article{mathml,
  title = {Scaling of the {H$_2$} dissociation energy in strong laser fields},
  author = {Silva, Marta and Brandt, Jon},
  journal = {Phys. Rev. A},
  year = {2018},
  doi = {10.1103/PhysRevA.97.043402},
}

@article{entities,
  title = {Pattern Formation and Defect Dynamics in Active Nematics},
  author = {Berg, Kira and Costa, Lev},
  journal = {Soft Matter},
  year = {2020},
  doi = {10.1039/c9sm02101a},
}

@article{cutoff,
  title = {Observation of Anomalous Diffusion of Colloidal Tracers in Dense Bacterial Suspensions near Walls},
  author = {Kowalski, Gus and Rossi, Hana},
  journal = {Physical Review E},
  year = {2022},
  doi = {10.1103/PhysRevE.105.044601},
}

@article{twelve,
  title = {A Twelve-Author Survey of Reproducible Citation Checking},
  author = {Okafor, Ada and Lindqvist, Ben and Moreau, Cleo and Tanaka, Dan and Novak, Eva and
            Silva, Finn and Brandt, Gus and Kowalski, Hana and Haddad, Ivo and Rossi, Jan and
            Berg, Kira and Costa, Lev},
  journal = {Scientometrics},
  year = {2023},
  doi = {10.1007/s11192-023-04700-z},
}

@article{etal,
  title = {Measuring Citation Accuracy in Physics Preprints},
  author = {Okafor, Ada and Lindqvist, Ben and Moreau, Cleo and Tanaka, Dan and Novak, Eva},
  journal = {Quantitative Science Studies},
  year = {2021},
  doi = {10.1162/qss_a_00120},
}

@article{openalexvenue,
  title = {Calibrated Uncertainty for Citation Intent Classifiers},
  author = {Haddad, Ivo and Rossi, Jan},
  journal = {Journal of Machine Learning Research},
  year = {2025},
  doi = {10.48550/arXiv.2502.07777},
}

@article{preprinttitle,
  title = {Neural Ranking Networks for Citation Screening},
  author = {Moreau, Finn and Tanaka, Cleo},
  journal = {Information Processing \& Management},
  year = {2022},
  doi = {10.1016/j.ipm.2022.102987},
}
"""
#: Real entries the sources describe differently; none may get a warning or an error.
NO_FALSE_ALARM = ("erratum", "mathml", "entities", "cutoff", "twelve", "etal", "preprinttitle",
                  "openalexvenue")


@pytest.fixture(scope="module")
def fake() -> Iterator[ScholarlyFake]:
    with running() as server:
        for p in PAPERS:
            server.add_paper(p)
        yield server


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fabrications")
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    return folder


def check(fake: ScholarlyFake, folder: Path, fmt: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CITELENS_") and k != "S2_API_KEY"}
    env.update(fake.env())
    env.update({"CITELENS_CACHE_DIR": str(folder / f"cache-{fmt}"), "CITELENS_RETRY_BACKOFF": "0.01",
                "CITELENS_S2_RPS": "1000", "CITELENS_REQUEST_TIMEOUT": "3",
                "PYTHONPATH": str(ROOT / "server")})
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", "--format", fmt,
                           str(folder / "refs.bib")], capture_output=True, text=True, env=env,
                          cwd=folder, timeout=120, check=False)
    assert proc.stdout.strip() and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def report(fake: ScholarlyFake, project: Path) -> dict[str, Any]:
    return dict(json.loads(check(fake, project, "json")))


def flags(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The warning and error diagnostics of an entry in its .bib file."""
    return [d for d in report["diagnostics"] if d["key"] == key and d["file"].endswith("refs.bib")
            and d["severity"] in ("warning", "error")]


def line_of(report_diag: dict[str, Any]) -> str:
    return BIB.splitlines()[report_diag["range"]["start"]["line"]]


def test_a_paraphrased_title_names_the_words_on_the_title(report: dict[str, Any]) -> None:
    (d,) = flags(report, "xu2023prompts")
    assert d["code"] == "METADATA_MISMATCH" and d["severity"] == "warning"
    assert "cited: 'towards'; the paper: 'for'" in d["message"]
    assert line_of(d).lstrip().startswith("title = ")
    assert d["class"] == "wrong-metadata"


def test_a_singular_for_a_plural_is_a_wrong_title_word(report: dict[str, Any]) -> None:
    (d,) = flags(report, "hoffmann2021gnn")
    assert d["code"] == "METADATA_MISMATCH"
    assert "cited: 'network'; the paper: 'networks'" in d["message"]


@pytest.mark.parametrize(("key", "venue", "arxiv"), [
    ("okafor2026sparse", "Symposium on Regularization Techniques", "2602.12251"),
    ("sato2026tokens", "CVPR", "2601.04412"),
])
def test_a_preprint_cited_in_a_venue_no_source_knows_it_in(
        report: dict[str, Any], key: str, venue: str, arxiv: str) -> None:
    (d,) = flags(report, key)
    assert d["code"] == "METADATA_MISMATCH" and d["severity"] == "warning"
    assert (f"no source shows this paper published in {venue}; the sources know it as "
            f"arXiv:{arxiv}") in d["message"]
    assert "may not be indexed yet" in d["message"]  # accepted papers reach indexes late
    assert line_of(d).lstrip().startswith(("journal = ", "booktitle = "))
    entry = next(e for e in report["entries"] if e["key"] == key)
    assert entry["status"] == "PARTIAL" and entry["class"] == "wrong-metadata"


def test_classes_in_json_sarif_and_the_text_summary(
        fake: ScholarlyFake, project: Path, report: dict[str, Any]) -> None:
    (nf,) = flags(report, "made2024up")
    assert nf["code"] == "NOT_FOUND" and nf["class"] == "fabricated"
    assert report["summary"]["by_class"]["fabricated"] >= 1
    assert report["summary"]["by_class"]["wrong-metadata"] >= 4
    sarif = json.loads(check(fake, project, "sarif"))
    results = sarif["runs"][0]["results"]
    classes = {r["properties"]["class"] for r in results if "properties" in r
               and "class" in r["properties"]}
    assert classes == {"fabricated", "wrong-metadata"}
    text = check(fake, project, "text")
    assert "entries by class: " in text and " fabricated" in text


@pytest.mark.parametrize("key", NO_FALSE_ALARM)
def test_sources_that_disagree_raise_no_false_alarm(report: dict[str, Any], key: str) -> None:
    entry = next(e for e in report["entries"] if e["key"] == key)
    assert flags(report, key) == [], entry["summary"]
    assert entry["status"] == "VERIFIED", entry["summary"]


# --------------------------------------------------------------------------- the editor


async def test_the_title_fix_replaces_only_the_title_and_the_hover_gives_the_class(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    text = BIB.split("\n\n@article{okafor2026sparse", 1)[0] + "\n"
    bib.write_text(text, encoding="utf-8")
    env = fake.env(cache=tmp_path / "cache")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    async with session("visual-studio-code", tmp_path, env=env, settings=settings) as client:
        u = open_doc(client, bib)
        ds = await diagnostics(client, u, lambda ds: any(
            d.code == "METADATA_MISMATCH" and "towards" in d.message for d in ds), timeout=60)
        d = next(d for d in ds if d.code == "METADATA_MISMATCH" and "towards" in d.message)
        assert isinstance(d.data, dict) and d.data["class"] == "wrong-metadata"
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(u), range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d], only=[lsp.CodeActionKind.QuickFix])))
        actions = [a for a in got or [] if isinstance(a, lsp.CodeAction)]
        fix = actions[0]
        assert fix.title == ("Use the paper's title: “Extensible Prompts for Language Models on "
                             "Zero-shot Language Style Customization”")
        assert fix.is_preferred and fix.edit is not None and fix.edit.changes
        after = apply_text_edits(text, fix.edit.changes[u])
        expected = text.replace("Extensible Prompts towards Language", "Extensible Prompts for "
                                "Language", 1)
        assert after == expected  # the title's one word, nothing else in the file
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(0, 18)))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert "Class: wrong-metadata" in hover.contents.value
        assert uri(bib) == u
