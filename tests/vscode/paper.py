"""A small LaTeX paper with two fabricated references, for the VS Code end-to-end test.

- ``dwork1992pricing`` is a real paper whose ``doi`` field belongs to an unrelated PNAS paper
  (DOI_MISMATCH; the fake scholarly server knows the real one, so the quick fix can correct it);
- ``smith2021quantum`` is invented: no source knows it (NOT_FOUND);
- ``vaswani2017attention`` is right (VERIFIED).

The .bib writes field names in lower case (``archiveprefix``) and in its own order, so an entry
added by cite-while-writing can be checked against the file's style. The last paragraph ends in
an empty ``\\cite{}``, where the test types a title.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.nvim.paper import DWORK_NAOR_1992, RIGHT_DOI, WRONG_DOI

__all__ = ["DWORK_NAOR_1992", "FABRICATED_KEY", "MISMATCH_KEY", "RIGHT_DOI", "WRONG_DOI", "seed"]

MISMATCH_KEY = "dwork1992pricing"
FABRICATED_KEY = "smith2021quantum"

BIB = f"""@inproceedings{{dwork1992pricing,
  title = {{Pricing via Processing or Combatting Junk Mail}},
  author = {{Dwork, Cynthia and Naor, Moni}},
  booktitle = {{Advances in Cryptology -- CRYPTO' 92}},
  year = {{1992}},
  pages = {{139--147}},
  doi = {{{WRONG_DOI}}},
}}

@inproceedings{{vaswani2017attention,
  title = {{Attention is All you Need}},
  author = {{Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob
             and Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia}},
  booktitle = {{Advances in Neural Information Processing Systems}},
  year = {{2017}},
  pages = {{5998--6008}},
  eprint = {{1706.03762}},
  archiveprefix = {{arXiv}},
}}

@article{{smith2021quantum,
  title = {{Quantum Entanglement Dynamics in Self-Healing Concrete Microstructures}},
  author = {{Smith, Jonathan and Garcia, Maria}},
  journal = {{Journal of Applied Materials Research}},
  year = {{2021}},
  volume = {{14}},
  pages = {{233--251}},
}}
"""

TEX = r"""\documentclass{article}
\begin{document}

Proof of work was first proposed to fight junk mail~\cite{dwork1992pricing}.
Sequence models now rely on attention alone~\cite{vaswani2017attention}.
Concrete heals its own cracks through quantum entanglement~\cite{smith2021quantum}.

All figures were drawn with Matplotlib~\cite{}

\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""


@dataclass(frozen=True)
class VsPaper:
    dir: Path
    tex: Path
    bib: Path

    def line_of(self, needle: str, path: Path | None = None) -> int:
        """0-based line of the first line of the .tex (or ``path``) holding ``needle``."""
        lines = (path or self.tex).read_text(encoding="utf-8").splitlines()
        return next(i for i, line in enumerate(lines) if needle in line)


def seed(dest: Path) -> VsPaper:
    dest.mkdir(parents=True, exist_ok=True)
    tex, bib = dest / "main.tex", dest / "refs.bib"
    tex.write_text(TEX, encoding="utf-8")
    bib.write_text(BIB, encoding="utf-8")
    return VsPaper(dest, tex, bib)


def fake_papers() -> list[dict[str, Any]]:
    """Papers the fake scholarly server must know besides its own (the real Dwork & Naor)."""
    return [DWORK_NAOR_1992]
