"""Whether a piece of text reads as instructions to a language model.

Input: text a document hides from its reader (``pdf.visibility``), of unknown origin. Hidden text
is suspect whatever it says; hidden text written for a model is the prompt-injection attack
itself, and the security triage rates a document carrying it ``high``. The test is a small set of
patterns, case-insensitive, any of which is enough:

- telling a model to drop what it was told: "ignore / disregard / forget / override ... previous /
  prior / above / system ... instructions / prompt / rules / context";
- giving it a role or an identity: "you are (now) a ...", "act as ...", "pretend to be ...",
  "from now on you ...";
- chat-template and role markers: ``system:``, ``assistant:``, ``<|im_start|>``, ``[INST]``,
  ``<<SYS>>``, "### Instruction";
- an imperative sentence that names its addressee (assistant, AI, model, LLM, chatbot, agent,
  reviewer...) or steers an answer ("reply only with", "respond with", "your response",
  "do not mention", "rate this ... highly").

It errs towards saying yes: a false "instructions" only raises a risk that hidden text already
raised to ``medium``.
"""

from __future__ import annotations

from typing import Final

import regex

__all__ = ["reads_as_instructions"]

MAX_CHECKED_CHARS: Final = 4000
_FLAGS: Final = regex.IGNORECASE | regex.VERSION1
_PATTERNS: Final = tuple(
    regex.compile(pattern, _FLAGS)
    for pattern in (
        r"\b(ignore|disregard|forget|override|bypass|skip)\b.{0,60}?\b(instructions?|prompts?|rules|"
        r"directions|guidelines|context|messages?|constraints|polic(y|ies))\b",
        r"\byou\s+are\s+(now\s+)?(a|an|the|my|no\s+longer)\b",
        r"\byou\s+(must|should|will)\s+(now\s+)?(always|never|only|ignore|respond|reply|answer|say|output)\b",
        r"\b(act|behave)\s+as\s+(a|an|if)\b|\bpretend\s+(to\s+be|you)\b|\bfrom\s+now\s+on\b",
        r"(^|\n)\s*(system|assistant|user|developer)\s*:",
        r"<\|im_(start|end)\|>|\[/?INST\]|<</?SYS>>|#{2,}\s*(instruction|system|response)",
        r"\b(reply|respond|answer|output|return)\s+(only\s+)?(with|in)\b|\byour\s+(response|answer|reply|output)\b",
        r"\b(do\s+not|don't|never)\s+(mention|reveal|tell|disclose|say)\b",
        r"\b(assistant|chatbot|language\s+model|llm|large\s+language|ai\s+(model|system|agent)|"
        r"chatgpt|gpt-?\d|claude|gemini|copilot|reviewer|agent)\b.{0,80}?\b(must|should|please|"
        r"recommend|rate|approve|accept|summari[sz]e|include|ignore)\b",
        r"\b(recommend|rate|score|approve|accept)\b.{0,40}?\b(highly|positively|strongly|favou?rably|"
        r"without\s+reservation|as\s+(excellent|strong))\b",
    )
)


def reads_as_instructions(text: str) -> bool:
    """Whether the text (its first ``MAX_CHECKED_CHARS`` characters) reads as instructions to a
    model."""
    sample = " ".join(text[:MAX_CHECKED_CHARS].split(" "))
    return any(pattern.search(sample) for pattern in _PATTERNS)
