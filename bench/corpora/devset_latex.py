"""Truth of a LaTeX document read from its source: headings with levels, body text in source
order, list items, tables, and the paragraphs the unit tests quote.

    python -m bench.corpora.devset_latex MAIN.tex [--cls acmart]   # prints the truth as JSON

Used by ``bench/corpora/devset_build.py`` on the sources it compiles. The reading is deliberately plain
(no TeX engine): ``\\input``/``\\include`` inlined, comments dropped, argument-free user macros
expanded, maths, figures' drawings, algorithms and citations removed, the remaining markup
stripped to its visible words. What it cannot know (numbers TeX generates, text drawn inside
figures) costs every system equally.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

HEADING_COMMANDS = ("part", "chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph")
MAX_INPUT_DEPTH = 8
MACRO_PASSES = 4
# classes that print the abstract under a heading of its own (others run it in: "Abstract—")
ABSTRACT_HEADING = {
    "acmart": "Abstract",
    "elsarticle": "Abstract",
    "ltxdoc": "Abstract",
    "article": "Abstract",
}
REFERENCES_HEADING = "References"
# heading commands a class sets into the first line of their paragraph ("Lower Level. Text...")
RUNIN_COMMANDS = {"llncs": ("subsubsection", "paragraph", "subparagraph"),
                  "IEEEtran": ("subsubsection", "paragraph", "subparagraph")}  # fmt: skip
RUNIN_DEFAULT = ("paragraph", "subparagraph")
DROP_ENVIRONMENTS = (
    "equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*", "eqnarray",
    "eqnarray*", "displaymath", "math", "tikzpicture", "picture", "algorithm", "algorithmic", "algorithm2e",
    "comment", "filecontents", "filecontents*", "CCSXML", "pgfpicture", "axis", "flalign", "flalign*",
    "subequations", "IEEEeqnarray", "IEEEeqnarray*", "thebibliography", "figure", "figure*", "wrapfigure",
    "lstlisting", "minted", "verbatim", "Verbatim", "LVerbatim", "tabbing",
)  # fmt: skip
# figure floats: only their captions are text (their drawing's labels are not known from source);
# listings and verbatim are dropped too: their spacing is the layout itself and no two systems agree
KEEP_ARGUMENT = (
    "textbf", "textit", "emph", "texttt", "textsc", "textsf", "textrm", "textup", "textmd", "textsl",
    "underline", "mbox", "hbox", "fbox", "text", "textnormal", "uline", "url", "nolinkurl", "path",
    "caption", "footnote", "thanks", "small", "large", "Large", "title", "enquote", "mkbibquote", "hl",
    "textcolor", "colorbox", "tnote", "ul", "sout", "strong", "makebox", "raisebox", "resizebox",
    "scalebox", "paragraph", "cs", "cmd", "meta", "marg", "oarg", "parg", "env", "pkg", "cls", "opt",
    "option", "file", "cmdx", "csn", "bibfield", "bibtype", "sty", "prg", "acro", "texttt",
)  # fmt: skip
# commands whose first argument is a name, not text: drop the argument with the command
DROP_ARGUMENT = (
    "label", "ref", "eqref", "autoref", "cref", "Cref", "pageref", "cite", "citep", "citet", "citeauthor",
    "citeyear", "nocite", "bibliographystyle", "bibliography", "includegraphics", "vspace", "hspace",
    "vspace*", "hspace*", "setlength", "addtolength", "setcounter", "addtocounter", "input", "include",
    "usepackage", "documentclass", "newcommand", "renewcommand", "providecommand", "def", "color",
    "definecolor", "hypersetup", "pagestyle", "thispagestyle", "linewidth", "fontsize", "balance",
    "acmDOI", "acmISBN", "acmConference", "acmBooktitle", "acmPrice", "acmYear", "copyrightyear",
    "setcopyright", "keywords", "ccsdesc", "received", "IEEEoverridecommandlockouts", "orcid", "email",
    "affiliation", "institution", "country", "city", "state", "postcode", "streetaddress", "author",
    "address", "shortauthors", "authornote", "titlenote", "subtitle", "acmSubmissionID", "settopmatter",
    "institute", "authorrunning", "titlerunning", "inst", "orcidID", "IEEEauthorblockN", "IEEEauthorblockA",
    "hyperref", "index", "glossary", "IEEEpeerreviewmaketitle", "IEEEoverridecommandlockouts", "ead",
    "tnotetext", "fntext", "cortext", "journal", "affil", "markboth", "todo", "newtheorem", "pdfbookmark",
    "phantomsection", "addcontentsline", "newenvironment", "renewenvironment", "DeclareMathOperator",
    "footnotemark", "footnotetext", "tableofcontents", "listoffigures", "listoftables", "maketitle",
    "date", "today", "special", "write", "noindent", "centering", "raggedright", "newpage", "clearpage",
    "appendix", "bibitem", "newblock", "protect", "linebreak", "pagebreak", "nolinebreak", "cline",
    "multirow", "toprule", "midrule", "bottomrule", "hline", "cmidrule", "arrayrulecolor", "rowcolor",
    "cellcolor", "rule", "AtBeginDocument", "let", "makeatletter", "makeatother", "iffalse", "fi",
    "sloppy", "IfFileExists", "graphicspath", "lstset", "captionsetup", "subfloat", "acmArticleType",
    "acmCodeLink", "acmDataLink", "acmJournal", "acmVolume", "acmNumber", "acmArticle", "acmMonth",
    "doi", "isbn", "issn", "startPage", "authorsaddresses", "Description", "teaser", "numberofauthors",
    "alignauthor", "additionalauthors", "conferenceinfo", "CopyrightYear", "crdata", "category",
    "terms", "copyrightnotice", "pdfinfo", "DeclareRobustCommand", "ifdefined", "else", "relax",
)  # fmt: skip
MARK = "\u2063"  # stands where the printed text and the source differ
ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "c": "\u0327",
    "=": "\u0304",
}
LITERALS = {
    r"\%": "%", r"\&": "&", r"\_": "_", r"\#": "#", r"\$": "$", r"\{": "{", r"\}": "}",
    "---": "\u2014", "--": "\u2013", "``": "\u201c", "''": "\u201d", r"\ldots": "\u2026",
    r"\dots": "\u2026", r"\LaTeXe": "LATEX 2\u03b5", r"\LaTeX": "LATEX", r"\TeX": "TEX", r"\eg": "e.g.",
    r"\ie": "i.e.", r"\etal": "et al.", r"\ss": "\u00df", r"\o": "\u00f8", r"\aa": "\u00e5",
    r"\ae": "\u00e6", r"\textbackslash": "\\", r"\textasciitilde": "~", r"\copyright": "\u00a9",
    r"\textregistered": "\u00ae", r"\texttrademark": "\u2122",
}  # fmt: skip


@dataclass
class Truth:
    title: str = ""
    headings: list[tuple[str, int]] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)  # body text in source order, heading texts included
    list_items: list[tuple[str, int]] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)
    runin: list[str] = field(default_factory=list)  # \paragraph headings (run into their paragraph)
    quotable: list[list[str]] = field(default_factory=list)  # each body paragraph's gap-free stretches


# -- source handling ------------------------------------------------------------------------------


def strip_comments(text: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", text)


def inline_inputs(text: str, base: Path, depth: int = 0) -> str:
    """``\\input{x}``, ``\\include{x}`` and ``\\subfile{x}`` replaced by the file's comment-free text."""
    if depth > MAX_INPUT_DEPTH:
        return text

    def load(match: re.Match[str]) -> str:
        name = match.group(2).strip()
        for candidate in (base / name, base / f"{name}.tex"):
            if candidate.is_file():
                inner = strip_comments(candidate.read_text(errors="replace"))
                return inline_inputs(inner, base, depth + 1)
        return " "

    return re.sub(r"\\(input|include|subfile)\s*\{([^}]*)\}", load, text)


def balanced(text: str, start: int) -> tuple[str, int]:
    """The group that opens at ``text[start] == '{'`` and the index past its closing brace."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
        i += 1
    return text[start + 1 :], len(text)


def skip_space_and_options(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n*":
        i += 1
    while i < len(text) and text[i] == "[":
        depth = 0
        while i < len(text):
            depth += (text[i] == "[") - (text[i] == "]")
            i += 1
            if depth == 0:
                break
        while i < len(text) and text[i] in " \t\n":
            i += 1
    return i


def argument(text: str, name: str) -> str | None:
    """The first braced argument of the first ``\\name``."""
    match = re.search(rf"\\{re.escape(name)}(?![A-Za-z])", text)
    if not match:
        return None
    i = skip_space_and_options(text, match.end())
    return balanced(text, i)[0] if i < len(text) and text[i] == "{" else None


def verbatim(text: str) -> str:
    """Short-verb text (``|\\cmd|``) as markup whose visible words are the text itself."""
    escaped = text.replace("\\", "\\textbackslash ").replace("{", "\\{").replace("}", "\\}")
    return f" {MARK} {escaped} {MARK} "


def drop_command(text: str, name: str) -> str:
    """``text`` without every ``\\name{...}`` (its argument too, braces balanced)."""
    while match := re.search(rf"\\{name}(?![A-Za-z])\s*", text):
        stop = match.end()
        if stop < len(text) and text[stop] == "{":
            stop = balanced(text, stop)[1]
        text = text[: match.start()] + " " + text[stop:]
    return text


def user_macros(text: str) -> dict[str, str]:
    """Argument-free ``\\newcommand``/``\\def`` macros: name -> body."""
    macros: dict[str, str] = {}
    pattern = r"\\(?:re)?(?:newcommand|providecommand|DeclareRobustCommand)\*?\s*"
    pattern += r"\{?\\([A-Za-z]+)\}?\s*(\[\d\])?\s*\{"
    for match in re.finditer(pattern, text):
        if match.group(2):
            continue
        macros[match.group(1)] = balanced(text, match.end() - 1)[0]
    for match in re.finditer(r"\\def\\([A-Za-z]+)\s*\{", text):
        macros.setdefault(match.group(1), balanced(text, match.end() - 1)[0])
    return macros


def expand_macros(text: str, macros: dict[str, str]) -> str:
    if not macros:
        return text
    names = sorted(macros, key=len, reverse=True)
    pattern = re.compile(r"\\(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z])(\{\})?")
    for _ in range(MACRO_PASSES):
        expanded = pattern.sub(lambda m: macros[m.group(1)].replace("\\", "\\\\").replace("\\\\", "\\"), text)
        if expanded == text:
            break
        text = expanded
    return text


# -- markup to text --------------------------------------------------------------------------------


def remove_environments(text: str, names: tuple[str, ...], keep_captions: bool = True) -> str:
    for name in names:
        begin = re.compile(r"\\begin\s*\{" + re.escape(name) + r"\}")
        end = re.compile(r"\\end\s*\{" + re.escape(name) + r"\}")
        out, pos = [], 0
        while match := begin.search(text, pos):
            closing = end.search(text, match.end())
            stop = closing.end() if closing else len(text)
            inner = text[match.end() : closing.start() if closing else len(text)]
            out.append(text[pos : match.start()])
            if keep_captions:
                out += [f" \\par {c} \\par " for c in captions(inner)]
            pos = stop
        out.append(text[pos:])
        text = "".join(out)
    return text


def captions(text: str) -> list[str]:
    found = []
    for match in re.finditer(r"\\caption(?:of\{[a-z]+\})?(?![A-Za-z])", text):
        i = skip_space_and_options(text, match.end())
        if i < len(text) and text[i] == "{":
            found.append(balanced(text, i)[0])
    return found


def remove_math(text: str, mark: str = " ") -> str:
    text = re.sub(r"\$\$.*?\$\$", mark, text, flags=re.S)
    text = re.sub(r"(?<!\\)\$.*?(?<!\\)\$", mark, text, flags=re.S)
    text = re.sub(r"\\\(.*?\\\)", mark, text, flags=re.S)
    return re.sub(r"\\\[.*?\\\]", mark, text, flags=re.S)


def accents(text: str) -> str:
    def accent(match: re.Match[str]) -> str:
        return unicodedata.normalize("NFC", match.group(2) + ACCENTS[match.group(1)])

    text = re.sub(r"\\([`'^\"~=])\s*\{?\\?([A-Za-z])\}?", accent, text)
    return re.sub(r"\\(c)\s*\{([A-Za-z])\}", accent, text)


def mark_gaps(text: str) -> str:
    """``MARK`` where the printed text holds what the source does not say (maths, citation and
    reference numbers) or moves elsewhere (footnotes, floated captions): quotes avoid them."""
    text = remove_math(text, f" {MARK} ")
    text = re.sub(
        r"(\\(?:cite[a-z]*|ref|eqref|autoref|cref|Cref|pageref)\*?)(?![A-Za-z])", f" {MARK} \\1", text
    )
    # manuals' markup of command names and arguments prints what the source does not say (\\, ⟨⟩)
    text = re.sub(
        r"\\(?:cs|meta|marg|oarg|parg|cmd|cmdx|csn|m|arg)\s*\{[^{}]*\}",
        lambda m: f" {MARK} {m.group(0)} {MARK} ",
        text,
    )
    while match := re.search(r"\\(footnote|caption)(?![A-Za-z])\s*(\[[^\]]*\])?\s*\{", text):
        inner, stop = balanced(text, match.end() - 1)
        text = f"{text[: match.start()]} {MARK} {inner} {MARK} {text[stop:]}"
    return text


def detex(text: str, keep_marks: bool = False) -> str:
    """Visible words of a fragment of LaTeX (no environments with structure left in it)."""
    text = remove_math(text) if keep_marks else remove_math(text).replace(MARK, " ")
    text = accents(text)
    for literal, value in LITERALS.items():
        text = text.replace(literal, value)
    text = re.sub(r"\\(?:href)\s*\{[^}]*\}", " ", text)
    drop = "|".join(map(re.escape, sorted(DROP_ARGUMENT, key=len, reverse=True)))
    # a dropped command with its options and braced arguments (up to two, as \cite[p.~3]{key})
    text = re.sub(rf"\\(?:{drop})(?![A-Za-z])\s*(?:\[[^\]]*\]\s*)*(?:\{{[^{{}}]*\}}\s*){{0,2}}", " ", text)
    text = re.sub(r"\\(?:begin|end)\s*\{[^}]*\}(?:\s*\{[^}]*\})?", " ", text)
    text = re.sub(r"\\\\\*?(?:\[[^\]]*\])?", " ", text)
    text = re.sub(r"\\[,;:! ]", " ", text)
    text = text.replace("~", " ")
    text = re.sub(r"\\[A-Za-z@]+\*?(?:\[[^\]]*\])?", " ", text)  # any other command: its name goes
    text = re.sub(r"\\.", " ", text)
    text = text.replace("{", "").replace("}", "").replace("&", " ")
    return " ".join(text.split())


# -- structure -------------------------------------------------------------------------------------


def list_items(body: str) -> list[tuple[str, int]]:
    """Items of itemize/enumerate/description with their nesting depth (0 at the top)."""
    items: list[tuple[str, int]] = []
    depth = -1
    token = re.compile(
        r"\\begin\s*\{(itemize|enumerate|description|compactitem|compactenum)\}|"
        r"\\end\s*\{(itemize|enumerate|description|compactitem|compactenum)\}|\\item(?![A-Za-z])"
    )
    marks = list(token.finditer(body))
    for index, match in enumerate(marks):
        if match.group(1):
            depth += 1
        elif match.group(2):
            depth -= 1
        elif depth >= 0:
            stop = marks[index + 1].start() if index + 1 < len(marks) else len(body)
            raw = body[match.end() : stop]
            label = ""
            if raw.lstrip().startswith("["):
                start = raw.index("[")
                close = raw.find("]", start)
                label, raw = raw[start + 1 : close], raw[close + 1 :]
            text = detex(remove_environments(raw, DROP_ENVIRONMENTS, keep_captions=False))
            text = f"{detex(label)} {text}".strip()
            if text:
                items.append((text, depth))
    return items


def tables(body: str) -> list[list[list[str]]]:
    found = []
    for match in re.finditer(r"\\begin\s*\{(tabular\*?|tabularx|longtable|tabulary)\}", body):
        end = re.search(r"\\end\s*\{" + re.escape(match.group(1)) + r"\}", body[match.end() :])
        inner = body[match.end() : match.end() + end.start()] if end else ""
        i = 0
        while i < len(inner) and inner[i] in " \n\t":
            i += 1
        if match.group(1) in ("tabular*", "tabularx", "tabulary") and i < len(inner) and inner[i] == "{":
            i = balanced(inner, i)[1]
        while i < len(inner) and inner[i] in " \n\t[":
            i = skip_space_and_options(inner, i)
        if i < len(inner) and inner[i] == "{":
            i = balanced(inner, i)[1]
        rows = []
        for raw in re.split(r"\\\\(?:\[[^\]]*\])?", inner[i:]):
            cells = [
                detex(re.sub(r"\\multi(?:column|row)\{[^}]*\}\{[^}]*\}", " ", c))
                for c in re.split(r"(?<!\\)&", raw)
            ]
            if any(cells):
                rows.append(cells)
        if rows:
            found.append(rows)
    return found


def level_map(body: str) -> dict[str, int]:
    """Heading command -> level, the title being 1: the shallowest command in use is level 2."""
    used = [name for name in HEADING_COMMANDS if re.search(rf"\\{name}\*?\s*[\[{{]", body)]
    first = HEADING_COMMANDS.index(used[0]) if used else 2
    return {name: index - first + 2 for index, name in enumerate(HEADING_COMMANDS) if index >= first}


def read(main: Path, cls: str | None = None, bbl: Path | None = None) -> Truth:
    """The truth of ``main`` (its class from its ``\\documentclass`` unless ``cls`` says)."""
    source = inline_inputs(strip_comments(main.read_text(errors="replace")), main.parent)
    cls = (
        cls or (re.search(r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}", source) or [None, "article"])[1]
    )
    begin = source.find("\\begin{document}")
    # the preamble's macros only (a manual's examples redefine \\section in verbatim), and never
    # the commands whose structure the reading keys on
    macros = {
        name: value
        for name, value in user_macros(source[: max(begin, 0)]).items()
        if name not in HEADING_COMMANDS and name not in KEEP_ARGUMENT and name not in ("maketitle", "item")
    }
    end = source.rfind("\\end{document}")
    preamble, body = (
        source[: max(begin, 0)],
        source[begin + len("\\begin{document}") : end if end > 0 else None],
    )
    title_tex = drop_command(argument(body, "title") or argument(preamble, "title") or "", "thanks")
    body = re.sub(r"\\title\s*(\[[^\]]*\])?\s*\{", r"\\DROPPEDTITLE{", body)
    body = expand_macros(body, macros)
    if "\\MakeShortVerb" in source or cls in ("ltxguide", "ltxdoc"):
        body = re.sub(r"(?<![\\{])\|([^|\n]{1,80})\|", lambda m: verbatim(m.group(1)), body)
    body = remove_environments(body, DROP_ENVIRONMENTS)
    body = re.sub(r"\\DROPPEDTITLE\s*\{", "\\\\author{", body)
    # LaTeX News prints its masthead from the class, not from a \\title
    truth = Truth(title="LATEX News" if cls == "ltnews" else detex(expand_macros(title_tex, macros)))
    if truth.title:
        truth.headings.append((truth.title, 1))
        truth.paragraphs.append(truth.title)
    truth.list_items = list_items(body)
    truth.tables = tables(body)
    levels = level_map(body)
    heading = re.compile(
        r"\\(" + "|".join(HEADING_COMMANDS) + r")(\*?)\s*(?:\[[^\]]*\])?\s*\{|\\begin\s*\{(abstract|acks)\}|"
        r"\\(tableofcontents)(?![A-Za-z])|"
        r"\\par(?![A-Za-z])|\n\s*\n"
    )
    pos, pending = 0, []
    abstract_title = ABSTRACT_HEADING.get(str(cls))
    for match in heading.finditer(body):
        if match.start() < pos:
            continue
        pending.append(body[pos : match.start()])
        if match.group(1):
            text, pos = balanced(body, match.end() - 1)
            flush(truth, pending)
            name = detex(drop_command(drop_command(text, "footnote"), "thanks"))
            if name:
                if match.group(1) in RUNIN_COMMANDS.get(str(cls), RUNIN_DEFAULT):
                    truth.runin.append(name)
                truth.headings.append((name, levels.get(match.group(1), 2)))
                truth.paragraphs.append(name)
        elif match.group(3) or match.group(4):
            pos = match.end()
            flush(truth, pending)
            name = {"acks": "Acknowledgments", "abstract": abstract_title or ""}.get(
                match.group(3), "Contents"
            )
            if name:
                truth.headings.append((name, 2))
                truth.paragraphs.append(name)
        else:
            pos = match.end()
            flush(truth, pending)
    pending.append(body[pos:])
    flush(truth, pending)
    if bbl is not None and bbl.is_file():
        entries = re.split(r"\\bibitem", strip_comments(bbl.read_text(errors="replace")))[1:]
        if entries:
            if not any(h.lower() in ("references", "bibliography") for h, _ in truth.headings):
                truth.headings.append((REFERENCES_HEADING, 2))
                truth.paragraphs.append(REFERENCES_HEADING)
            for raw in entries:
                entry = re.sub(r"^\s*(\[[^\]]*\])?\s*\{[^}]*\}", " ", raw)
                entry = re.sub(r"\\end\s*\{thebibliography\}.*", " ", entry, flags=re.S)
                if text := detex(entry):
                    truth.paragraphs.append(text)
    return truth


def flush(truth: Truth, pending: list[str]) -> None:
    raw = "".join(pending)
    pending.clear()
    if text := detex(raw):
        truth.paragraphs.append(text)
        # a table's cells are no sentences, and a float may be set pages away: no quotes from them
        floating = re.search(r"\\begin\s*\{(?:table|tabular|figure)|(?<!\\)&", raw)
        marked = "" if floating else detex(mark_gaps(raw), keep_marks=True)
        truth.quotable.append([" ".join(part.split()) for part in marked.split(MARK) if part.strip()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("main", type=Path)
    parser.add_argument("--cls")
    args = parser.parse_args()
    truth = read(args.main, args.cls, args.main.with_suffix(".bbl"))
    json.dump(truth.__dict__, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
