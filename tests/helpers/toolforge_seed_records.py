"""One HotpotQA and one MuSiQue seed record, shared by the seed reader tests and their fuzzers."""

from typing import Any

HOTPOT: dict[str, Any] = {
    "_id": "h1",
    "question": "Which city was the birthplace of the director of Film X?",
    "answer": "Springfield",
    "type": "bridge",
    "level": "hard",
    "supporting_facts": [["Film X", 0], ["Jane Doe", 1]],
    "context": [
        ["Film X", ["Film X is a 1999 drama directed by Jane Doe.", " It won two awards."]],
        ["Jane Doe", ["Jane Doe is a director.", " She was born in Springfield."]],
    ],
}
MUSIQUE: dict[str, Any] = {
    "id": "m1",
    "question": "Where was the director of Film X born?",
    "answer": "Springfield",
    "answer_aliases": ["Springfield, USA"],
    "answerable": True,
    "paragraphs": [
        {
            "idx": 0,
            "title": "Film X",
            "paragraph_text": "Film X is a drama. It was directed by Jane Doe.",
            "is_supporting": True,
        },
        {
            "idx": 1,
            "title": "Jane Doe",
            "paragraph_text": "Jane Doe is a director. She was born in Springfield.",
            "is_supporting": True,
        },
        {"idx": 2, "title": "Other", "paragraph_text": "Unrelated text.", "is_supporting": False},
    ],
    "question_decomposition": [
        {"id": 1, "question": "who directed Film X", "answer": "Jane Doe", "paragraph_support_idx": 0},
        {"id": 2, "question": "where was #1 born", "answer": "Springfield", "paragraph_support_idx": 1},
    ],
}
