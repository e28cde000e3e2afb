"""A two-column paper typeset by TeX (Debian's texlive: IEEEtran, lipsum), for the structure
engine's tests on a page nobody drew by hand: justified columns on one baseline grid, a
title and author blocks across both columns, a figure across both at the top of page 2, a
table with rules only under its header, lists, run-in headings, and an arXiv-style identifier
turned up the left margin of every page. ``HEADINGS`` is the truth from the source.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Final

STAMP: Final = "arXiv:2404.13330v2 [eess.IV] 26 Apr 2024"
TITLE: Final = "Robust Reading Order for Scientific Documents"
HEADINGS: Final = [
    (1, TITLE),
    (2, "I. INTRODUCTION"),
    (3, "A. Motivation"),
    (4, "1) A deeper part"),
    (2, "II. RELATED WORK"),
    (3, "A. Geometric methods"),
    (4, "Run-in methods"),
    (2, "III. METHOD"),
    (2, "IV. CONCLUSION"),
]
TABLE: Final = [("Method", "Recall", "Precision"), ("Baseline", "0.65", "0.67"), ("Ours", "0.91", "0.93")]
ITEMS: Final = [
    "- The first point is about columns and how they interleave when read naively.",
    "- The second point concerns rotated text in margins.",
    "1. Find the columns.",
    "2. Order the blocks.",
]
CAPTION: Final = "Fig. 1. A wide figure spanning both columns of the page"
SOURCE: Final = r"""\documentclass[conference]{IEEEtran}
\usepackage{graphicx}
\usepackage{eso-pic}
\usepackage{xcolor}
\usepackage{lipsum}
\AddToShipoutPictureBG{\AtPageLowerLeft{\put(22,250){\rotatebox{90}{\fontsize{20}{20}\selectfont
  \textcolor[gray]{0.5}{arXiv:2404.13330v2 [eess.IV] 26 Apr 2024}}}}}
\title{Robust Reading Order for Scientific Documents}
\author{\IEEEauthorblockN{Alice Author}\IEEEauthorblockA{University of Somewhere\\alice@example.org}
\and\IEEEauthorblockN{Bob Writer}\IEEEauthorblockA{Institute of Elsewhere\\bob@example.org}}
\begin{document}
\maketitle
\begin{abstract}
We study how machines read pages. Columns, margins and rotated stamps confuse simple
extractors. This abstract is long enough to span several lines of the first column.
\end{abstract}
\section{Introduction}
Reading order matters for every downstream task. \lipsum[1]
\subsection{Motivation}
\lipsum[2]
\begin{itemize}
\item The first point is about columns and how they interleave when read naively.
\item The second point concerns rotated text in margins.
\end{itemize}
\subsubsection{A deeper part}
\lipsum[3]
\section{Related Work}
\lipsum[4]
\begin{figure*}[t]
\centering
\rule{0.8\textwidth}{3cm}
\caption{A wide figure spanning both columns of the page, with a long caption that a reader
meets between the bands.}
\end{figure*}
\subsection{Geometric methods}
\lipsum[5]
\paragraph{Run-in methods} \lipsum[6]
\begin{table}[h]
\centering
\caption{Results on the dev set}
\begin{tabular}{lrr}
\hline
Method & Recall & Precision \\
\hline
Baseline & 0.65 & 0.67 \\
Ours & 0.91 & 0.93 \\
\hline
\end{tabular}
\end{table}
\section{Method}
\lipsum[7-8]
\begin{enumerate}
\item Find the columns.
\item Order the blocks.
\end{enumerate}
\section{Conclusion}
\lipsum[9-10]
\end{document}
"""


def available() -> bool:
    return shutil.which("pdflatex") is not None


def build(folder: Path) -> Path:
    """Typesets ``paper.pdf`` in ``folder`` (twice, as LaTeX wants for its references)."""
    (folder / "paper.tex").write_text(SOURCE)
    for _ in range(2):
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=120,
        )
    return folder / "paper.pdf"
