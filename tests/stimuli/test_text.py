"""The one tokenizer every gate reads (:mod:`verdictpack.stimuli._text`): its properties."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from verdictpack.stimuli._text import (
    _SENTENCE_END,
    _ascii_sentences,
    _split,
    _token_pattern,
    lines,
    sentence_tokens,
    tokens,
    word_count,
    word_tokens,
)


def sentences(text: str) -> tuple[tuple[str, ...], ...]:
    """The case-kept tokens of each sentence of ``text`` (the case-kept half of ``lines``)."""
    return _split(lines(text)[0])


# the characters the rules treat specially, ASCII and not; and texts that put them next to each
# other: words and numbers with inner marks, joined by stops, closing brackets and white space
ASCII_WORDS = ["a", "Zx", "09", "3.5", "1,200", "O'Neill", "long-term", "e.g", "U.S", "x2", "_"]
ASCII_SEPARATORS = [
    " ", " ", ". ", "! ", "? ", ".) ", '." ', "?'] ", "!)\n", "...", ".)", ".", ",", "'", '"',
    ")", "(", "-", ":", "\t", "\x1c", ". (", ".\x1c",
]  # fmt: skip
ASCII_TEXT = st.one_of(
    st.text(st.sampled_from("aZx09 .,!?'-\"()[]_\t\n\x1c;:/"), max_size=80),
    st.lists(
        st.tuples(st.sampled_from(ASCII_WORDS), st.sampled_from(ASCII_SEPARATORS)), max_size=20
    ).map(lambda parts: "".join(w + sep for w, sep in parts)),
)
ANY_TEXT = st.text(
    st.one_of(
        st.sampled_from("aZ09 .,!?'-’\"”)」。！？…．؟।ﬁ²١Σςß\u0301\u093f東京はカ"),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=60,
)
SEEDED = settings(max_examples=300, derandomize=True, deadline=None)


@SEEDED
@given(ASCII_TEXT)
def test_the_ascii_chunk_reader_follows_the_regular_expressions(text: str) -> None:
    regex = (" ".join(_token_pattern().findall(piece)) for piece in _SENTENCE_END.split(text))
    assert _ascii_sentences(text) == [line for line in regex if line]


@SEEDED
@given(ANY_TEXT)
def test_tokens_are_stable_folded_and_counted(text: str) -> None:
    kept = word_tokens(text)
    assert all(t and not any(c.isspace() for c in t) for t in kept)
    assert all(unicodedata.is_normalized("NFKC", t) for t in kept)
    # reading the tokens again gives them back
    assert word_tokens(" ".join(kept)) == kept
    assert kept == tuple(t for s in sentences(text) for t in s)
    assert tokens(text) == tuple(t.casefold() for t in kept)
    assert [len(s) for s in sentence_tokens(text)] == [len(s) for s in sentences(text)]
    assert word_count(text)[0] == len(kept)


def test_words_of_every_script_numbers_and_inner_marks() -> None:
    assert word_tokens("O'Neill's long-term plan costs $1,200.50 (3.5%) in 2024.") == (
        "O'Neill's", "long-term", "plan", "costs", "1,200.50", "3.5", "in", "2024",
    )  # fmt: skip
    assert word_tokens("Zürich’s café, l’été; Straße") == ("Zürich’s", "café", "l’été", "Straße")
    assert tokens("ΣΟΦΟΣ σοφός Straße STRASSE") == ("σοφοσ", "σοφόσ", "strasse", "strasse")
    assert word_tokens("हिन्दी भाषा") == ("हिन्दी", "भाषा")  # vowel signs stay in the word
    assert word_tokens("cafe\u0301 ﬁne ２０２４") == ("café", "fine", "2024")  # NFKC
    assert word_tokens("x2 a_b") == ("x", "2", "a", "b")


def test_cjk_characters_are_tokens_and_cjk_stops_end_sentences() -> None:
    assert sentences("東京は大きい。大阪も！本当？はい") == (
        ("東", "京", "は", "大", "き", "い"), ("大", "阪", "も"), ("本", "当"), ("は", "い"),
    )  # fmt: skip
    assert word_count("議会は予算を承認した。") == (10, 11)


def test_sentence_ends() -> None:
    text = 'He said "Yes." Then left! Why? e.g. U.S. 3.5 stays. End.) Next… مرحبا؟ नमस्ते। Last'
    assert [s[0] for s in sentences(text)] == [
        "He", "Then", "Why", "e", "U", "3.5", "End", "Next", "مرحبا", "नमस्ते", "Last",
    ]  # fmt: skip
    assert sentences("no stop.here, 3.5.x") == (("no", "stop", "here", "3.5", "x"),)
    # the same rule on ASCII text (read chunk by chunk)
    ascii_text = 'He said "Yes." Then left! (Why?) [Now.] e.g. U.S. 3.5 stays. End.) Last'
    assert [s[0] for s in sentences(ascii_text)] == [
        "He", "Then", "Why", "Now", "e", "U", "3.5", "End", "Last",
    ]  # fmt: skip
    assert sentences("") == () and sentences(" . ! ") == ()
